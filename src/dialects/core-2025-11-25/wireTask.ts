import type { TaskRecord } from '../../engine/index.js';

export const CORE_DIALECT = 'core-2025-11-25';
export const CORE_PROTOCOL_VERSION = '2025-11-25';
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** The 2025-11-25 `Task` object (spec §1.5). */
export interface CoreTask {
  taskId: string;
  status: string;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

/** The actual retention from creation: what the store will honour, or null when unlimited (spec R30). */
export function ttlFromCreation(record: TaskRecord): number | null {
  if (record.expiresAt !== null) return record.expiresAt - record.createdAt;
  return record.retention.kind === 'ttl' ? record.retention.ttlMs : null;
}

// spec R27 R28 R30 R32
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
