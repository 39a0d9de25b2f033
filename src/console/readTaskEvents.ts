import type { LoggedEvent, TaskEventLog } from '../engine/index.js';

/** Entries of a task's event log shown on its page: the latest ones. */
export const EVENTS_SHOWN = 50;

export interface TaskEvents {
  /** The latest entries, oldest first. */
  entries: LoggedEvent[];
  /** Entries in the log. */
  total: number;
}

/** The latest entries of a task's event log, two reads whatever its length; undefined where the store keeps none. */
export async function readTaskEvents(log: TaskEventLog | undefined, taskId: string): Promise<TaskEvents | undefined> {
  if (!log) return undefined;
  const total = await log.length(taskId);
  const entries = total === 0 ? [] : await log.read(taskId, Math.max(0, total - EVENTS_SHOWN), EVENTS_SHOWN);
  return { entries, total };
}
