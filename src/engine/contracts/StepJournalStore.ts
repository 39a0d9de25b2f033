/** A thrown value reduced to what survives JSON: its name and message. */
export interface SerializedError {
  name: string;
  message: string;
}

export type StepKind = 'do' | 'sleep' | 'elicit' | 'offer' | 'check';

/**
 * One journaled step of a task, keyed by its name (unique per task). `completed` steps return `value` on replay
 * without running again; `failed` ones throw `error` again; `waiting` ones are a sleep, an outstanding question or a
 * failed attempt waiting for its retry, until `wakeAt`. An `offer` row (named by its key) stays `waiting` for the
 * task's lifetime; a `check` row is `completed` with what `checkInput` saw of the offer `key`.
 */
export interface StepRow {
  name: string;
  kind: StepKind;
  state: 'completed' | 'failed' | 'waiting';
  value?: unknown;
  error?: SerializedError;
  /** Failed attempts of a `do` step so far. */
  failures?: number;
  /** Sleep: when it ends. Retry: when the next attempt may run. Question: its deadline. */
  wakeAt?: number;
  /** Question, offer: the input request as asked. */
  request?: unknown;
  /** Check: the key of the offer it read. */
  key?: string;
  /** When the row was written (epoch ms). */
  at: number;
}

/** A durable timer: the task sleeps (or waits for an answer or a retry) until `wakeAt`. */
export interface WakeEntry {
  taskId: string;
  wakeAt: number;
}

/**
 * The step journal and wake-at index of a store, in tables or keys of their own. Every write names the attempt (the
 * task's claim counter) that makes it: a write is refused unless that attempt is the latest one to `fence` the task,
 * so a runner superseded by a newer one can never change what the newer one replays. Every store passes the shared
 * step contract suite.
 */
export interface StepJournalStore {
  init(): Promise<void>;
  /** Raises the task's fence to `attempt`; false when a later attempt holds it already. */
  fence(taskId: string, attempt: number): Promise<boolean>;
  /** Every row of the task, in no particular order. */
  read(taskId: string): Promise<StepRow[]>;
  /** Inserts or replaces the row named `row.name` when `attempt` holds the fence; false (nothing written) otherwise. */
  write(taskId: string, attempt: number, row: StepRow): Promise<boolean>;
  /** Drops the task's rows, fence and timer (the task is gone). */
  remove(taskId: string): Promise<void>;
  /** Sets the task's durable timer. One per task: a later call replaces it. */
  setWake(taskId: string, wakeAt: number): Promise<void>;
  /** Clears the task's timer if it is still the one set for `wakeAt` (a newer one stays). */
  clearWake(taskId: string, wakeAt: number): Promise<void>;
  /** Timers due at or before `until`, earliest first. */
  due(until: number, limit: number): Promise<WakeEntry[]>;
}
