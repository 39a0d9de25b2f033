import { systemClock, type Clock } from '../contracts/Clock.js';
import type { SerializedError, StepJournalStore, StepRow } from '../contracts/StepJournalStore.js';

/**
 * The attempt that wrote to the journal is no longer the task's latest: a newer runner took the task over (its lease
 * lapsed), so this one must stop without changing anything.
 */
export class StaleLeaseError extends Error {
  constructor(taskId: string, detail: string) {
    super(`Stale lease for task "${taskId}": ${detail}`);
    this.name = 'StaleLeaseError';
  }
}

/** What to do with a `do` step: run it (as its `attempt`-th try), return its journaled value, or throw again. */
export type BeginStepResult =
  | { state: 'run'; attempt: number }
  | { state: 'completed'; value: unknown }
  | { state: 'failed'; error: SerializedError }
  /** A failed attempt waits for its retry until `wakeAt`. */
  | { state: 'waiting'; wakeAt: number };

export type SleepState = { state: 'pending'; wakeAt: number } | { state: 'completed' };

/** What a check of an offer saw: its answer (consumed by that check), or nothing yet. */
export type OfferCheck = { state: 'answered'; response: unknown } | { state: 'unanswered' };

export type ElicitState =
  | { state: 'pending'; request: unknown; wakeAt?: number }
  | { state: 'answered'; response: unknown }
  | { state: 'timed_out' };

/** How a failed attempt ends: another try at `retryAtMs`, or terminally. */
export type StepFailureDisposition = { retryAtMs: number } | { terminal: true };

const TIMED_OUT = { outcome: 'timed_out' } as const;

/**
 * The journal of one run (attempt) of one task: it claimed the task's fence when opened and read every row once, so a
 * replayed step costs no store round trip and a new one costs one write. Writes of a superseded attempt are refused.
 */
export class StepJournal {
  private constructor(
    private readonly store: StepJournalStore,
    readonly taskId: string,
    readonly attempt: number,
    private readonly rows: Map<string, StepRow>,
    private readonly clock: Clock,
  ) {}

  /** Claims the task for `attempt` and loads its rows; throws StaleLeaseError when a later attempt holds it. */
  static async open(
    store: StepJournalStore,
    taskId: string,
    attempt: number,
    clock = systemClock,
  ): Promise<StepJournal> {
    if (!(await store.fence(taskId, attempt))) throw new StaleLeaseError(taskId, `attempt ${attempt} was superseded`);
    const rows = new Map((await store.read(taskId)).map((row) => [row.name, row]));
    return new StepJournal(store, taskId, attempt, rows, clock);
  }

  /** How many steps the task has journaled. */
  get size(): number {
    return this.rows.size;
  }

  beginStep(name: string): BeginStepResult {
    const row = this.rows.get(name);
    if (row?.state === 'completed') return { state: 'completed', value: row.value };
    if (row?.state === 'failed') return { state: 'failed', error: row.error ?? { name: 'Error', message: 'failed' } };
    if (row?.wakeAt !== undefined && row.wakeAt > this.clock.now()) return { state: 'waiting', wakeAt: row.wakeAt };
    return { state: 'run', attempt: (row?.failures ?? 0) + 1 };
  }

  completeStep(name: string, value: unknown): Promise<boolean> {
    return this.put({ name, kind: 'do', state: 'completed', value, ...this.failuresOf(name), at: this.clock.now() });
  }

  failStep(name: string, error: SerializedError, disposition: StepFailureDisposition): Promise<boolean> {
    const failures = (this.rows.get(name)?.failures ?? 0) + 1;
    const at = this.clock.now();
    if ('terminal' in disposition) return this.put({ name, kind: 'do', state: 'failed', error, failures, at });
    return this.put({ name, kind: 'do', state: 'waiting', error, failures, wakeAt: disposition.retryAtMs, at });
  }

  /** Journals a sleep ending at `wakeAtMs` (the first call decides; replays keep the journaled time). */
  async recordSleep(name: string, wakeAtMs: number): Promise<SleepState> {
    const row = this.rows.get(name);
    if (row?.state === 'completed') return { state: 'completed' };
    const wakeAt = row?.wakeAt ?? wakeAtMs;
    if (!row && !(await this.put({ name, kind: 'sleep', state: 'waiting', wakeAt, at: this.clock.now() }))) {
      throw new StaleLeaseError(this.taskId, `sleep "${name}" was refused`);
    }
    return wakeAt <= this.clock.now() ? { state: 'completed' } : { state: 'pending', wakeAt };
  }

  /**
   * Journals a question. Its deadline is fixed by the first call; once it passes unanswered the step resolves as
   * timed out for good (a late answer changes nothing).
   */
  async recordElicit(name: string, request: unknown, timeoutAtMs?: number): Promise<ElicitState> {
    const row = this.rows.get(name);
    if (row?.state === 'completed') {
      return isTimedOut(row.value) ? { state: 'timed_out' } : { state: 'answered', response: row.value };
    }
    const now = this.clock.now();
    if (row?.wakeAt !== undefined && row.wakeAt <= now) {
      if (!(await this.put({ ...row, state: 'completed', value: TIMED_OUT, at: now }))) {
        throw new StaleLeaseError(this.taskId, `question "${name}" was refused`);
      }
      return { state: 'timed_out' };
    }
    if (row) return { state: 'pending', request: row.request, ...(row.wakeAt !== undefined && { wakeAt: row.wakeAt }) };
    const next: StepRow = { name, kind: 'elicit', state: 'waiting', request, at: now };
    if (timeoutAtMs !== undefined) next.wakeAt = timeoutAtMs;
    if (!(await this.put(next))) throw new StaleLeaseError(this.taskId, `question "${name}" was refused`);
    return { state: 'pending', request, ...(timeoutAtMs !== undefined && { wakeAt: timeoutAtMs }) };
  }

  /** Records the requestor's answer to the question `name` (once; a question already settled keeps its outcome). */
  async answerElicit(name: string, response: unknown): Promise<boolean> {
    const row = this.rows.get(name);
    if (!row || row.kind !== 'elicit' || row.state === 'completed') return false;
    return this.put({ ...row, state: 'completed', value: response, at: this.clock.now() });
  }

  /** Ends the journaled sleep `name` now, before its time (an answer to an offer cut it short). */
  async endSleep(name: string): Promise<void> {
    const row = this.rows.get(name);
    if (!row || row.kind !== 'sleep' || row.state === 'completed') return;
    if (!(await this.put({ ...row, state: 'completed', at: this.clock.now() }))) {
      throw new StaleLeaseError(this.taskId, `sleep "${name}" was refused`);
    }
  }

  /** The kind of the step journaled under `name`, if any. */
  kindOf(name: string): StepRow['kind'] | undefined {
    return this.rows.get(name)?.kind;
  }

  /** Journals the standing offer `key` (a replay's re-offer keeps the first). */
  async recordOffer(key: string, request: unknown): Promise<void> {
    if (this.rows.has(key)) return;
    if (!(await this.put({ name: key, kind: 'offer', state: 'waiting', request, at: this.clock.now() }))) {
      throw new StaleLeaseError(this.taskId, `offer "${key}" was refused`);
    }
  }

  /** How many offers the task has journaled (without one, no answer can cut a sleep short). */
  get offerCount(): number {
    let count = 0;
    for (const row of this.rows.values()) if (row.kind === 'offer') count++;
    return count;
  }

  /** What the check `name` saw, when it is journaled. */
  checked(name: string): OfferCheck | undefined {
    const row = this.rows.get(name);
    return row?.kind === 'check' ? (row.value as OfferCheck) : undefined;
  }

  /** Whether a journaled check consumed the answer to the offer `key`. */
  consumed(key: string): boolean {
    for (const row of this.rows.values()) {
      if (row.kind === 'check' && row.key === key && (row.value as OfferCheck).state === 'answered') return true;
    }
    return false;
  }

  /** Journals what the check `name` of the offer `key` saw; an `answered` check consumes the answer for good. */
  async recordCheck(name: string, key: string, check: OfferCheck): Promise<void> {
    const row: StepRow = { name, kind: 'check', state: 'completed', key, value: check, at: this.clock.now() };
    if (!(await this.put(row))) throw new StaleLeaseError(this.taskId, `check "${name}" was refused`);
  }

  private failuresOf(name: string): { failures?: number } {
    const failures = this.rows.get(name)?.failures;
    return failures === undefined ? {} : { failures };
  }

  private async put(row: StepRow): Promise<boolean> {
    if (!(await this.store.write(this.taskId, this.attempt, row))) return false;
    this.rows.set(row.name, row);
    return true;
  }
}

function isTimedOut(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { outcome?: unknown }).outcome === 'timed_out';
}
