import type { InputRequest } from '../engine/index.js';

/** Per-step retries: up to `limit` further attempts, waiting `baseDelayMs · 2^(n-1)` (at most `maxDelayMs`), jittered. */
export interface RetryPolicy {
  limit?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export interface StepConfig {
  retries?: RetryPolicy;
  /** Each attempt of the closure is abandoned (and its signal aborted) after this long. */
  timeoutMs?: number;
}

/** What a step's closure is given: a signal aborted on timeout or cancellation, and which attempt this is (from 1). */
export interface StepAttempt {
  signal: AbortSignal;
  attempt: number;
}

export type { InputRequest };

/** The requestor's answer (e.g. `{ action: 'accept', content }`), or `{ outcome: 'timed_out' }` once the deadline passed. */
export type ElicitOutcome = Record<string, unknown>;

/** What `checkInput` found: the answer to the offer (which this check consumed), or none yet. */
export type InputCheck = { state: 'answered'; response: ElicitOutcome } | { state: 'unanswered' };

/**
 * The replay-aware step API a workflow handler receives. The handler runs again from the top whenever the task
 * resumes (after a sleep, an answer, a retry wait or a crash); completed steps return their journaled results without
 * running again, so every side effect belongs inside `step.do`. Step names are journal keys, unique per task.
 */
export interface Step {
  /** The task this run belongs to; undefined for a plain (non-task) call, which runs without a journal. */
  readonly taskId: string | undefined;
  /** Aborted when the task is cancelled, deleted or expires. */
  readonly signal: AbortSignal;
  do<T>(name: string, fn: (attempt: StepAttempt) => T | Promise<T>): Promise<T>;
  do<T>(name: string, config: StepConfig, fn: (attempt: StepAttempt) => T | Promise<T>): Promise<T>;
  /** A durable sleep: the task stays `working` and holds nothing until it ends. */
  sleep(name: string, duration: number | string): Promise<void>;
  sleepUntil(name: string, when: Date | number): Promise<void>;
  /** Asks the requestor: the task is `input_required` with the question and holds nothing until answered. */
  elicit(name: string, request: InputRequest, options?: { timeoutMs?: number }): Promise<ElicitOutcome>;
  /**
   * Registers a standing, non-blocking input request under `key` (unique for the task's lifetime; keys and step names
   * share one namespace): the task stays `working`. The requestor may answer it at any time, once; the answer wakes
   * the task (a parked sleep ends at once, and while it runs the sleeps it records complete at once until a
   * `checkInput` consumes the answer). A replay's re-offer keeps the first.
   */
  offer(key: string, request: InputRequest): Promise<void>;
  /**
   * Journaled and non-blocking, as the step `name`: takes the unconsumed answer to the offer `key`, or finds none
   * (a replay sees the same). Never suspends; throws for a key that is not an offer.
   */
  checkInput(name: string, key: string): Promise<InputCheck>;
  /**
   * Emits an intermediate result of the task as an event of a registered type (data valid per its payloadSchema),
   * delivered to the task's event subscribers. Keyed by `name` (one namespace with step names): a resumed run never
   * emits it twice. A plain (non-task) call has no task to emit for: nothing is stored.
   */
  emit(name: string, type: string, data: Record<string, unknown>): Promise<void>;
  /** Writes the task's statusMessage for pollers (not journaled: a replay may write the same message again). */
  status(message: string): Promise<void>;
  /** A key stable across replays and retries of step `name`, for the idempotency keys of external calls. */
  idempotencyKey(name: string): string;
}
