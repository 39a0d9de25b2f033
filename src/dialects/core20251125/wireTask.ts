import type { TaskRecord } from '../../engine/index.js';
import { ttlFromCreation, type CoreTask } from '../../protocol/index.js';

// spec R27 R28 R30 R32: the record as the 2025-11-25 `Task`.
export function toCoreTask(record: TaskRecord): CoreTask {
  const task: CoreTask = {
    taskId: record.taskId,
    status: record.status,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    ttl: ttlFromCreation(record),
  };
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  if (record.pollIntervalMs !== undefined) task.pollInterval = record.pollIntervalMs;
  return task;
}
