import type { TaskRecord } from './TaskRecord.js';
import type { TaskStatus } from './TaskStatus.js';

/**
 * What an event may say about the write it announces: the version and status now stored. A waiter uses it to skip
 * a read that could not satisfy it (a version it has seen, a status it does not wait for). It is a hint only: an
 * event without one means "read the task".
 */
export interface TaskChange {
  version: number;
  status: TaskStatus;
  /**
   * The task as that write stored it, sent along by a cross-process bus when the write ended the task and the record
   * is small (TASK_EVENT_RECORD_MAX_BYTES): a waiter for the end takes it instead of reading the task again.
   */
  record?: TaskRecord;
}
