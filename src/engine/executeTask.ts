import type { EngineHandle, TaskWork, TaskWorkContext } from './Executor.js';
import { INTERNAL_ERROR_CODE } from './TaskRecord.js';
import { isTerminal } from './TaskStatus.js';

/**
 * Runs one task's work for an executor: claims the task (runner, lease, attempt), aborts the work when the task ends
 * elsewhere (cancelled, deleted, expired — spec R50), and records the outcome. Shared by every executor so a task
 * runs the same way in this process and in a worker.
 */
export async function executeTask(
  engine: EngineHandle,
  taskId: string,
  runnerId: string,
  work: TaskWork,
  controller: AbortController,
): Promise<void> {
  const task = await engine.markStarted(taskId, runnerId);
  if (!task || controller.signal.aborted) return;
  const stopObserving = engine.observe(taskId, (record) => {
    if (!record || isTerminal(record.status) || engine.isExpired(record, Date.now())) {
      controller.abort(new Error(record ? `Task is ${record.status}` : 'Task no longer exists'));
    }
  });
  const context: TaskWorkContext = {
    task,
    signal: controller.signal,
    setStatusMessage: (message) => engine.setStatusMessage(taskId, message),
    requestInput: async (request) => {
      const [key] = await engine.requestInput(taskId, [request]);
      try {
        return await engine.awaitInputAnswer(taskId, key as string, controller.signal);
      } finally {
        if (controller.signal.aborted) await engine.withdrawInput(taskId, key as string).catch(() => {});
      }
    },
    suspend: (requests, meta) => engine.suspend(taskId, requests, meta),
  };
  try {
    const outcome = await work(context);
    if (controller.signal.aborted || outcome.kind === 'suspended') return;
    await engine.complete(taskId, outcome);
  } catch (error) {
    if (controller.signal.aborted) return;
    const message = error instanceof Error ? error.message : String(error);
    await engine.fail(taskId, `The task's work failed: ${message}`, { code: INTERNAL_ERROR_CODE, message });
  } finally {
    stopObserving();
  }
}
