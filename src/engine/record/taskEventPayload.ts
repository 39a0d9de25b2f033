import type { TaskChange } from './TaskChange.js';
import { isTaskStatus } from './TaskStatus.js';

/**
 * The message a cross-process bus sends for one event: `[taskId, version, status]` when the publisher knows the
 * change, otherwise the bare task id. Task ids are any string (SEP-1686 lets clients choose them), so a bare id that
 * starts with `[` is sent as `[taskId]`, and an id is never split out of a longer text.
 */
export function encodeTaskEvent(taskId: string, change?: TaskChange): string {
  if (change) return JSON.stringify([taskId, change.version, change.status]);
  return taskId.startsWith('[') ? JSON.stringify([taskId]) : taskId;
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
  const [taskId, version, status] = value as [string, unknown, unknown];
  if (value.length === 3 && Number.isSafeInteger(version) && isTaskStatus(status))
    return { taskId, change: { version: version as number, status } };
  return { taskId: payload };
}
