import type { TaskChange } from './TaskChange.js';
import type { TaskRecord } from './TaskRecord.js';
import { isTaskStatus } from './TaskStatus.js';

/**
 * The largest event a bus sends with the record of a task that ended (PostgreSQL's NOTIFY takes under 8000 bytes);
 * a larger one goes without it, and its waiters read the task.
 */
export const TASK_EVENT_RECORD_MAX_BYTES = 4096;

/**
 * The message a cross-process bus sends for one event: `[taskId, version, status]` when the publisher knows the
 * change (with the record as a fourth element when the change carries a small one), otherwise the bare task id.
 * Task ids are any string (SEP-1686 lets clients choose them), so a bare id that starts with `[` is sent as
 * `[taskId]`, and an id is never split out of a longer text.
 */
export function encodeTaskEvent(taskId: string, change?: TaskChange): string {
  if (!change) return taskId.startsWith('[') ? JSON.stringify([taskId]) : taskId;
  const bare = [taskId, change.version, change.status];
  if (change.record) {
    const full = JSON.stringify([...bare, change.record]);
    if (Buffer.byteLength(full) <= TASK_EVENT_RECORD_MAX_BYTES) return full;
  }
  return JSON.stringify(bare);
}

export function decodeTaskEvent(payload: string): { taskId: string; change?: TaskChange } {
  if (!payload.startsWith('[')) return { taskId: payload };
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return { taskId: payload };
  }
  if (!Array.isArray(value) || typeof value[0] !== 'string') return { taskId: payload };
  if (value.length === 1) return { taskId: value[0] };
  const [taskId, version, status, record] = value as [string, unknown, unknown, unknown];
  if ((value.length !== 3 && value.length !== 4) || !Number.isSafeInteger(version) || !isTaskStatus(status))
    return { taskId: payload };
  const change: TaskChange = { version: version as number, status };
  // Only a record that is the one announced: anything else is ignored (the waiter reads instead).
  if (isRecordOf(record, taskId, change)) change.record = record;
  return { taskId, change };
}

/**
 * The task id of an event without decoding the rest, so a process with no waiter for the task skips it: undefined
 * when the message is not plainly shaped (decodeTaskEvent then decides).
 */
export function taskIdOfEvent(payload: string): string | undefined {
  if (!payload.startsWith('[')) return payload;
  const match = /^\["((?:[^"\\]|\\.)*)"[,\]]/.exec(payload);
  if (!match) return undefined;
  try {
    return JSON.parse(`"${match[1] as string}"`) as string;
  } catch {
    return undefined;
  }
}

function isRecordOf(value: unknown, taskId: string, change: TaskChange): value is TaskRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Partial<TaskRecord>;
  return record.taskId === taskId && record.version === change.version && record.status === change.status;
}
