import {
  SUSPENDED,
  type TaskOutcome,
  type TaskRecord,
  type TaskSuspension,
  type TaskWork,
  type TaskWorkContext,
} from '../engine/index.js';
import { isObject } from '../rpc/index.js';
import { runInternalCall } from './InternalCall.js';
import { runModernInternalCall } from './ModernInternalCall.js';
import type { ServerFactory } from './ServerLike.js';

export interface TaskWorkHooks {
  /** Progress the tool reported for `task` (forwarded to the requestor where it is connected). */
  onProgress?(task: TaskRecord, params: Record<string, unknown>): void;
}

/**
 * State of a multi-round-trip tool between runs, kept on the task: the request state the tool returned, which task
 * input key stands for which of the tool's own keys, and (first run only) answers that came with the original request.
 */
export interface MultiRoundTripState {
  requestState?: string;
  keys?: Record<string, string>;
  responses?: Record<string, unknown>;
}

/** Status messages from frequent progress are written at most this often per task; the last one always lands. */
const STATUS_INTERVAL_MS = 250;

/**
 * The work of every task, wherever it runs (this process or a worker): an internal call of the original request on a
 * fresh instance of the author's server. Progress messages become the task's statusMessage for requestors that poll.
 */
export function createTaskWork(factory: ServerFactory, hooks: TaskWorkHooks = {}): TaskWork {
  return (context: TaskWorkContext): Promise<TaskOutcome | TaskSuspension> => {
    const task = context.task;
    const capabilities = isObject(task.meta['clientCapabilities']) ? task.meta['clientCapabilities'] : {};
    const status = throttledStatus(context);
    const onProgress = (params: Record<string, unknown>) => {
      // spec R56: nothing more once the task has ended.
      if (context.signal.aborted) return;
      hooks.onProgress?.(task, params);
      if (typeof params['message'] === 'string') status.write(params['message']);
    };
    const run =
      task.meta['inputStyle'] === 'multiRoundTrip'
        ? runMultiRoundTrip(factory, context, capabilities, onProgress)
        : runInternalCall(factory, task.request, {
            signal: context.signal,
            clientCapabilities: capabilities,
            requestInput: (request) => context.requestInput(request),
            onProgress,
          });
    return run.finally(() => status.stop());
  };
}

/**
 * One round of a tool written with `inputRequired(...)`: it runs with the answers to its previous questions; when it
 * asks again, the task is suspended with those questions and nothing stays in memory until they are answered.
 */
async function runMultiRoundTrip(
  factory: ServerFactory,
  context: TaskWorkContext,
  clientCapabilities: Record<string, unknown>,
  onProgress: (params: Record<string, unknown>) => void,
): Promise<TaskOutcome | TaskSuspension> {
  const task = context.task;
  const state = (isObject(task.meta['mrtr']) ? task.meta['mrtr'] : {}) as MultiRoundTripState;
  const inputResponses: Record<string, unknown> = { ...state.responses };
  for (const [taskKey, toolKey] of Object.entries(state.keys ?? {})) {
    const answer = task.inputAnswers[taskKey];
    // A JSON-RPC error has no multi-round-trip form: the tool sees the answer missing and may ask again.
    if (answer && 'result' in answer) inputResponses[toolKey] = answer.result;
  }
  const outcome = await runModernInternalCall(factory, task.request, {
    signal: context.signal,
    clientCapabilities,
    inputResponses,
    ...(state.requestState !== undefined && { requestState: state.requestState }),
    onProgress,
  });
  if (outcome.kind !== 'input_required') return outcome;
  const toolKeys = Object.keys(outcome.inputRequests);
  await context.suspend(
    toolKeys.map((key) => outcome.inputRequests[key] as { method: string; params?: Record<string, unknown> }),
    (taskKeys) => ({
      mrtr: {
        ...(outcome.requestState !== undefined && { requestState: outcome.requestState }),
        keys: Object.fromEntries(taskKeys.map((taskKey, index) => [taskKey, toolKeys[index] as string])),
      } satisfies MultiRoundTripState,
    }),
  );
  return SUSPENDED;
}

/** Status messages from frequent progress, written at most every 250 ms per task; the last one always lands. */
export function throttledStatus(context: Pick<TaskWorkContext, 'signal' | 'setStatusMessage'>): {
  write(message: string): void;
  stop(): void;
} {
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = (message: string) => {
    last = Date.now();
    if (!context.signal.aborted) context.setStatusMessage(message).catch(() => {});
  };
  return {
    write(message) {
      clearTimeout(timer);
      const wait = last + STATUS_INTERVAL_MS - Date.now();
      if (wait <= 0) flush(message);
      else timer = setTimeout(() => flush(message), wait);
    },
    stop() {
      clearTimeout(timer);
    },
  };
}
