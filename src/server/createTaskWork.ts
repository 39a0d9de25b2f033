import type { TaskOutcome, TaskRecord, TaskWork, TaskWorkContext } from '../engine/index.js';
import { runInternalCall } from './InternalCall.js';
import type { ServerFactory } from './ServerLike.js';

export interface TaskWorkHooks {
  /** Progress the tool reported for `task` (forwarded to the requestor where it is connected). */
  onProgress?(task: TaskRecord, params: Record<string, unknown>): void;
}

/** Status messages from frequent progress are written at most this often per task; the last one always lands. */
const STATUS_INTERVAL_MS = 250;

/**
 * The work of every task, wherever it runs (this process or a worker): an internal call of the original request on a
 * fresh instance of the author's server. Progress messages become the task's statusMessage for requestors that poll.
 */
export function createTaskWork(factory: ServerFactory, hooks: TaskWorkHooks = {}): TaskWork {
  return (context: TaskWorkContext): Promise<TaskOutcome> => {
    const task = context.task;
    const capabilities = task.meta['clientCapabilities'];
    const status = throttledStatus(context);
    return runInternalCall(factory, task.request, {
      signal: context.signal,
      clientCapabilities:
        capabilities && typeof capabilities === 'object' ? (capabilities as Record<string, unknown>) : {},
      requestInput: (request) => context.requestInput(request),
      onProgress: (params) => {
        // spec R56: nothing more once the task has ended.
        if (context.signal.aborted) return;
        hooks.onProgress?.(task, params);
        if (typeof params['message'] === 'string') status.write(params['message']);
      },
    }).finally(() => status.stop());
  };
}

function throttledStatus(context: TaskWorkContext): { write(message: string): void; stop(): void } {
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
