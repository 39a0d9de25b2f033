import type { TaskRecord } from '../../engine/index.js';
import { keepAliveOf, SEP_GENERATION, type SepStatus, type SepTask } from '../../protocol/index.js';

/** The id a requestor knows the task by: its own for tasks it named, the receiver's otherwise. */
export function sepTaskId(record: TaskRecord): string {
  return record.dialect === SEP_GENERATION && record.idempotencyKey !== undefined
    ? record.idempotencyKey
    : record.taskId;
}

export function sepStatus(record: TaskRecord): SepStatus {
  if (record.status === 'failed' && record.recovery === 'failed-after-crash') return 'unknown';
  // spec 4.3: a task starts `submitted` and stays so until its work begins.
  if (record.status === 'working' && record.attempts === 0) return 'submitted';
  return record.status;
}

/** The proposal's task view, as in `tasks/get` and `tasks/list` (spec 3.2, 3.5, 7.2). */
export function toSepTask(record: TaskRecord): SepTask {
  const status = sepStatus(record);
  const task: SepTask = { taskId: sepTaskId(record), status, keepAlive: keepAliveOf(record) };
  if (record.pollIntervalMs !== undefined) task.pollFrequency = record.pollIntervalMs;
  if (status === 'failed' || status === 'unknown') {
    task.error =
      record.statusMessage ?? (record.outcome?.kind === 'error' ? record.outcome.error.message : 'The task failed');
  }
  return task;
}
