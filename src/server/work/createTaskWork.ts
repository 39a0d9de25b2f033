import {
  SUSPENDED,
  type ProgressUpdate,
  type ReportedStatus,
  type TaskOutcome,
  type TaskRecord,
  type TaskRequest,
  type TaskSuspension,
  type TaskWork,
  type TaskWorkContext,
} from '../../engine/index.js';
import { multiRoundTripMeta, readTaskMeta } from '../../dialects/index.js';
import { isObject } from '../../rpc/index.js';
import { runInternalCall } from './LegacyInternalCall.js';
import { InternalLinkPool } from './InternalLinkPool.js';
import { ModernInternalCall } from './ModernInternalCall.js';
import type { ServerFactory } from '../ServerLike.js';

export interface TaskWorkOptions {
  /**
   * Run every task on a fresh instance of the author's server with its own MCP handshake, as a plain call would get,
   * for servers whose instances keep state of one call. Default false: instances are kept and reused, one call at a
   * time each (see `pool`).
   */
  freshServerPerTask?: boolean;
  /** The links to reuse, to close them with their owner. Default: a pool of this work's own. */
  pool?: InternalLinkPool;
  /** The 2026-07-28 link of request-style tools (`inputStyle: 'multiRoundTrip'`). Default: one of this work's own. */
  modern?: ModernInternalCall;
}

export interface TaskWorkHooks {
  /** Progress the tool reported for `task` (forwarded to the requestor where it is connected). */
  onProgress?(task: TaskRecord, params: Record<string, unknown>): void;
}

/**
 * Status messages from frequent progress are written at most this often per task; the last one always lands (held
 * back, it is written with the outcome: `settleStatus`).
 */
const STATUS_INTERVAL_MS = 250;

/**
 * The work of every task, wherever it runs (this process or a worker): an internal call of the original request on an
 * instance of the author's server (kept between tasks, or fresh per task with `freshServerPerTask`). The call always
 * carries a progress token, the requestor's or its own, so a tool reports progress whatever the requestor's
 * generation; progress is stored on the task (its message as the statusMessage) for requestors that poll.
 */
export function createTaskWork(
  factory: ServerFactory,
  hooks: TaskWorkHooks = {},
  options: TaskWorkOptions = {},
): TaskWork {
  const pool = options.freshServerPerTask ? undefined : (options.pool ?? new InternalLinkPool(factory));
  const call: typeof runInternalCall = (_factory, request, callHooks) =>
    pool ? pool.run(request, callHooks) : runInternalCall(factory, request, callHooks);
  const modern = options.modern ?? new ModernInternalCall(factory);
  return (context: TaskWorkContext): Promise<TaskOutcome | TaskSuspension> => {
    const task = context.task;
    const meta = readTaskMeta(task);
    const capabilities = meta.clientCapabilities;
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
      meta.inputStyle === 'multiRoundTrip'
        ? runMultiRoundTrip(modern, context, capabilities, onProgress)
        : call(factory, withProgressToken(task), {
            signal: context.signal,
            clientCapabilities: capabilities,
            requestInput: (request) => context.requestInput(request),
            onProgress,
            stillRunning: (ended) => context.endsLater?.(ended),
          });
    return run.finally(() => status.stop());
  };
}

/**
 * The task's request with a progress token: the requestor's own (spec R55: kept for the task's life), or one of the
 * runtime's where it sent none. Tools report progress only when their request has a token, and a 2026 requestor sends
 * none (spec E16), so without one the task's progress, and `tasks/get`'s view of it, would stay empty. Progress under
 * the runtime's token is stored on the task, never sent to the requestor (see TaskRuntime.forwardProgress).
 */
export function withProgressToken(task: TaskRecord): TaskRequest {
  const { request } = task;
  const meta = isObject(request.params['_meta']) ? request.params['_meta'] : undefined;
  if (meta !== undefined && meta['progressToken'] !== undefined) return request;
  return {
    ...request,
    params: { ...request.params, _meta: { ...meta, progressToken: `${RUNTIME_TOKEN_PREFIX}${task.taskId}` } },
  };
}

/** Starts every progress token the runtime gives an internal call. */
const RUNTIME_TOKEN_PREFIX = 'mcp-tasks-task:';

/**
 * One round of a tool written with `inputRequired(...)`: it runs with the answers to its previous questions; when it
 * asks again, the task is suspended with those questions and nothing stays in memory until they are answered.
 */
async function runMultiRoundTrip(
  modern: ModernInternalCall,
  context: TaskWorkContext,
  clientCapabilities: Record<string, unknown>,
  onProgress: (params: Record<string, unknown>) => void,
): Promise<TaskOutcome | TaskSuspension> {
  const task = context.task;
  const state = readTaskMeta(task).multiRoundTrip ?? {};
  const inputResponses: Record<string, unknown> = { ...state.responses };
  for (const [taskKey, toolKey] of Object.entries(state.keys ?? {})) {
    const answer = task.inputAnswers[taskKey];
    // A JSON-RPC error has no multi-round-trip form: the tool sees the answer missing and may ask again.
    if (answer && 'result' in answer) inputResponses[toolKey] = answer.result;
  }
  const outcome = await modern.run(withProgressToken(task), {
    signal: context.signal,
    clientCapabilities,
    inputResponses,
    ...(state.requestState !== undefined && { requestState: state.requestState }),
    onProgress,
    stillRunning: (ended) => context.endsLater?.(ended),
  });
  if (outcome.kind !== 'input_required') return outcome;
  const toolKeys = Object.keys(outcome.inputRequests);
  await context.suspend(
    toolKeys.map((key) => outcome.inputRequests[key] as { method: string; params?: Record<string, unknown> }),
    (taskKeys) =>
      multiRoundTripMeta({
        ...(outcome.requestState !== undefined && { requestState: outcome.requestState }),
        keys: Object.fromEntries(taskKeys.map((taskKey, index) => [taskKey, toolKeys[index] as string])),
      }),
  );
  return SUSPENDED;
}

/**
 * Status messages and progress from frequent reports, written at most every 250 ms per task: within that window the
 * latest report wins (the latest message is kept even when a later report has none), and the last one always lands:
 * `stop()`, called as the work returns, hands a report still held back to the run (`settleStatus`), which writes it
 * with the outcome; a context without one gets it written at once.
 */
export function throttledStatus(
  context: Pick<TaskWorkContext, 'signal' | 'setStatusMessage' | 'reportProgress' | 'settleStatus'>,
): {
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
      const held: ReportedStatus = pending;
      if (held.message === undefined && held.progress === undefined) return;
      if (context.settleStatus) {
        pending = {};
        context.settleStatus(held);
      } else flush();
    },
  };
}
