import type { TaskStatus } from './TaskStatus.js';

/**
 * What an event may say about the write it announces: the version and status now stored. A waiter uses it to skip
 * a read that could not satisfy it (a version it has seen, a status it does not wait for). It is a hint only: an
 * event without one means "read the task".
 */
export interface TaskChange {
  version: number;
  status: TaskStatus;
}
