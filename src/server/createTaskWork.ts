import {
  SUSPENDED,
  type ProgressUpdate,
  type TaskOutcome,
  type TaskRecord,
  type TaskSuspension,
  type TaskWork,
  type TaskWorkContext,
} from '../engine/index.js';
import { isObject } from '../rpc/index.js';
import { runInternalCall } from './InternalCall.js';
import { InternalLinkPool } from './InternalLinkPool.js';
import { runModernInternalCall } from './ModernInternalCall.js';
import type { ServerFactory } from './ServerLike.js';

export interface TaskWorkOptions {
  /**
   * Run every task on a fresh instance of the author's server with its own MCP handshake, as a plain call would get,
   * for servers whose instances keep state of one call. Default false: instances are kept and reused, one call at a
   * time each (see `pool`).
   */
  freshServerPerTask?: boolean;
  /** The links to reuse, to close them with their owner. Default: a pool of this work's own. */
  pool?: InternalLinkPool;
}

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
 * The work of every task, wherever it runs (this process or a worker): an internal call of the original request on an
 * instance of the author's server (kept between tasks, or fresh per task with `freshServerPerTask`). Progress messages become the task's statusMessage for requestors that poll.
 */
export function createTaskWork(
  factory: ServerFactory,
  hooks: TaskWorkHooks = {},
  options: TaskWorkOptions = {},
): TaskWork {
  const pool = options.freshServerPerTask ? undefined : (options.pool ?? new InternalLinkPool(factory));
  const call: typeof runInternalCall = (_factory, request, callHooks) =>
    pool ? pool.run(request, callHooks) : runInternalCall(factory, request, callHooks);
  return (context: TaskWorkContext): Promise<TaskOutcome | TaskSuspension> => {
    const task = context.task;
    const capabilities = isObject(task.meta['clientCapabilities']) ? task.meta['clientCapabilities'] : {};
    const status = throttledStatus(context);
    const onProgress = (params: Record<string, unknown>) => {
      // spec R56: nothing more once the task has ended.
      if (context.signal.aborted) return;
      hooks.onProgress?.(task, params);
      const message = typeof params['message'] === 'string' ? params['message'] : undefined;
      if (typeof params['progress'] === 'number' && Number.isFinite(params['progress'])) {
        const total = params['total'];
        status.write(message, {
          progress: params['progress'],
          ...(typeof total === 'number' && Number.isFinite(total) && { total }),
          ...(message !== undefined && { message }),
        });
      } else if (message !== undefined) status.write(message);
    };
    const run =
      task.meta['inputStyle'] === 'multiRoundTrip'
        ? runMultiRoundTrip(factory, context, capabilities, onProgress)
        : call(factory, task.request, {
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

/**
 * Status messages and progress from frequent reports, written at most every 250 ms per task: within that window the
 * latest report wins (the latest message is kept even when a later report has none), and the last one always lands.
 * Progress is stored only where the context can (`reportProgress`: work running away from the requestor).
 */
export function throttledStatus(context: Pick<TaskWorkContext, 'signal' | 'setStatusMessage' | 'reportProgress'>): {
  write(message: string | undefined, progress?: ProgressUpdate): void;
  stop(): void;
} {
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  let pending: { message?: string; progress?: ProgressUpdate } = {};
  const flush = () => {
    last = Date.now();
    const { message, progress } = pending;
    pending = {};
    if (context.signal.aborted) return;
    const written =
      progress && context.reportProgress
        ? context.reportProgress(message === undefined ? progress : { ...progress, message })
        : message !== undefined
          ? context.setStatusMessage(message)
          : undefined;
    written?.catch(() => {});
  };
  return {
    write(message, progress) {
      clearTimeout(timer);
      if (message !== undefined) pending.message = message;
      if (progress !== undefined) pending.progress = progress;
      const wait = last + STATUS_INTERVAL_MS - Date.now();
      if (wait <= 0) flush();
      else timer = setTimeout(flush, wait);
    },
    stop() {
      clearTimeout(timer);
    },
  };
}
