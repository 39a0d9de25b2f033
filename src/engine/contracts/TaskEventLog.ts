/**
 * One entry of a task's event log: an intermediate result the task's work emitted (or one the runtime recorded for
 * it, such as its terminal status). Not to be confused with the store's TaskEventBus, which only wakes waiters of a
 * task's changes and keeps nothing.
 */
export interface LoggedEvent {
  /** Per task, from 0, each entry exactly one more than the one before (spec TE2). */
  seq: number;
  /** The event type's name, as listed by `events/list`. */
  type: string;
  /** A JSON object (spec V20, TE3). */
  data: Record<string, unknown>;
  /** When it was emitted (epoch ms). */
  at: number;
}

/** What the work hands the log; the log numbers it. */
export interface NewLoggedEvent {
  type: string;
  data: Record<string, unknown>;
  at: number;
  /**
   * Makes the append idempotent: a second append with the same key for the task stores nothing and answers the first
   * one's `seq` (a workflow's emit is keyed by its step name, so a resumed run never emits twice).
   */
  key?: string;
}

export type EventAppendResult =
  | { appended: true; seq: number }
  /** An entry with the same `key` is in the log already. */
  | { appended: false; reason: 'duplicate'; seq: number }
  /** The task holds `maxEvents` entries already: nothing more is stored for it (the log never drops entries). */
  | { appended: false; reason: 'limit' };

/**
 * The durable, append-only event log of every task, in tables or keys of its own. Entries are never reordered,
 * changed or dropped while the task exists (so a cursor stays valid for the task's life), and go with the task.
 * Every store passes the shared event log contract suite.
 */
export interface TaskEventLog {
  init(): Promise<void>;
  /**
   * Appends `event` as the task's next entry unless its `key` was appended before or the task holds `maxEvents`
   * entries already. Appenders in several processes at once get distinct, gap-free numbers.
   */
  append(taskId: string, event: NewLoggedEvent, maxEvents: number): Promise<EventAppendResult>;
  /** Up to `limit` entries with `seq >= from`, in `seq` order; empty for an unknown task. */
  read(taskId: string, from: number, limit: number): Promise<LoggedEvent[]>;
  /** How many entries the task has: the `seq` its next entry gets. */
  length(taskId: string): Promise<number>;
  /** Drops the task's entries (the task is gone). */
  remove(taskId: string): Promise<void>;
}

/**
 * The key under which an append is announced on the store's TaskEventBus, across processes: readers of a task's log
 * listen on it. It is not the task id, so an emit does not wake the task's status waiters. A task id that happens to
 * equal another task's topic costs that reader a needless re-read, never a wrong answer: a wake is only a hint.
 */
export function eventLogTopic(taskId: string): string {
  // No NUL: PostgreSQL's NOTIFY payloads cannot carry one.
  return `mcp-tasks-events:${taskId}`;
}
