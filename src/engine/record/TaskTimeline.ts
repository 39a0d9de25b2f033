import type { InputAnswer, PendingInput, TaskRecord } from './TaskRecord.js';
import { isTerminal, type TaskStatus } from './TaskStatus.js';

/** What one timeline entry records. */
export type TimelineKind =
  | 'created'
  | 'status'
  | 'message'
  | 'started'
  | 'runner'
  | 'input_requested'
  | 'input_offered'
  | 'input_answered'
  | 'input_withdrawn'
  | 'suspended'
  | 'resumed'
  | 'recovered'
  | 'cancelled'
  /** A run of the work ended (written by the runner, not derived from records). */
  | 'run_ended'
  /** A run told to stop is still running past the grace period (its work ignores the abort). */
  | 'run_overdue'
  /** The task was re-run as another task, or is the re-run of one (`link` names the other). */
  | 'rerun'
  /** An operator acted on the task from the console (`by`: the console role; `message`: what was done). */
  | 'operator';

/** One transition of a task, with the time it was stored. Only the fields of its kind are set. */
export interface TimelineEntry {
  at: number;
  kind: TimelineKind;
  status?: TaskStatus;
  from?: TaskStatus;
  message?: string;
  runner?: string;
  attempt?: number;
  /** Input requests, offers and answers: the request's key and method. */
  key?: string;
  method?: string;
  /** An answer that was a JSON-RPC error (declined, failed). */
  error?: boolean;
  /** Who cancelled (the owner scope of the request, or the console), or who acted (operator, rerun). */
  by?: string;
  action?: 'rerun' | 'fail';
  wakeAt?: number;
  /** run_ended: how the run ended; `stopMs` is how long its work took to stop after it was told to (aborted). */
  ran?: 'finished' | 'parked' | 'aborted' | 'handed-back';
  stopMs?: number;
  /** run_overdue: the grace period the run outlived. */
  graceMs?: number;
  /** rerun: the other task, and whether this one is the original (`to`) or the re-run (`from`). */
  link?: string;
  direction?: 'to' | 'from';
}

/**
 * Entries kept per task (see docs/limits.md): past it, the oldest entries but the first ("created") are dropped, so
 * a long task keeps how it began and what it did last.
 */
export const DEFAULT_TIMELINE_MAX_ENTRIES = 200;

/**
 * The timeline of a store, in tables or keys of its own beside the tasks, removed with the task. Appends come after
 * the compare-and-set that made the change, so a crash between the two can lose entries, never invent one.
 */
export interface TaskTimelineStore {
  init(): Promise<void>;
  /** Appends in order; then keeps the first entry and the newest `maxEntries - 1`. */
  append(taskId: string, entries: TimelineEntry[], maxEntries: number): Promise<void>;
  /** Every kept entry of the task, oldest first; empty for an unknown task. */
  read(taskId: string): Promise<TimelineEntry[]>;
  remove(taskId: string): Promise<void>;
}

const MESSAGE_CAP = 500;

/** A new attempt's `started`, else a new holder's `runner`, from `before` to `next`; undefined when neither. */
function claimEntry(
  at: number,
  before: Pick<TaskRecord, 'attempts' | 'runner'>,
  next: TaskRecord,
): TimelineEntry | undefined {
  if (next.attempts > before.attempts) {
    const started: TimelineEntry = { at, kind: 'started', attempt: next.attempts };
    if (next.runner !== undefined) started.runner = next.runner;
    return started;
  }
  if (next.runner !== before.runner && next.runner !== undefined) return { at, kind: 'runner', runner: next.runner };
  return undefined;
}

/** The transitions from `previous` (undefined at creation) to `next`, derived from the two stored records. */
export function timelineEntries(previous: TaskRecord | undefined, next: TaskRecord): TimelineEntry[] {
  const at = next.lastUpdatedAt;
  if (!previous) {
    const created: TimelineEntry = { at: next.createdAt, kind: 'created', status: next.status };
    if (next.statusMessage !== undefined) created.message = cap(next.statusMessage);
    // A task claimed by its insert (an executor had a slot free) starts its run here, as a later claim would record.
    const claimed = claimEntry(next.createdAt, { attempts: 0, runner: undefined }, next);
    return claimed ? [created, claimed] : [created];
  }
  const entries: TimelineEntry[] = [];
  if ((next.recoveries ?? 0) > (previous.recoveries ?? 0)) entries.push({ at, kind: 'recovered', action: 'rerun' });
  else if (next.recovery === 'failed-after-crash' && previous.recovery !== next.recovery)
    entries.push({ at, kind: 'recovered', action: 'fail' });
  const claimed = claimEntry(at, previous, next);
  if (claimed) entries.push(claimed);
  for (const [key, request] of Object.entries(next.inputRequests)) {
    if (!(key in previous.inputRequests)) entries.push(asked(at, 'input_requested', key, request));
  }
  for (const [key, answer] of Object.entries(next.inputAnswers)) {
    if (!(key in previous.inputAnswers)) entries.push(answered(at, key, answer));
  }
  for (const [key, offer] of Object.entries(next.offers ?? {})) {
    const before = previous.offers?.[key];
    if (!before) entries.push(asked(at, 'input_offered', key, offer));
    if (offer.answer && !before?.answered) entries.push(answered(at, key, offer.answer));
  }
  if (!isTerminal(next.status)) {
    for (const key of Object.keys(previous.inputRequests)) {
      if (!(key in next.inputRequests) && !(key in next.inputAnswers))
        entries.push({ at, kind: 'input_withdrawn', key });
    }
  }
  if (next.suspended && !previous.suspended) {
    const entry: TimelineEntry = { at, kind: 'suspended' };
    if (next.wakeAt !== undefined) entry.wakeAt = next.wakeAt;
    entries.push(entry);
  } else if (!next.suspended && previous.suspended && !isTerminal(next.status)) {
    entries.push({ at, kind: 'resumed' });
  }
  if (next.status !== previous.status) {
    if (next.status === 'cancelled') entries.push({ at, kind: 'cancelled', by: next.cancelledBy ?? 'unknown' });
    entries.push({ at, kind: 'status', from: previous.status, status: next.status });
  }
  if (next.statusMessage !== undefined && next.statusMessage !== previous.statusMessage)
    entries.push({ at, kind: 'message', message: cap(next.statusMessage) });
  return entries;
}

function asked(at: number, kind: TimelineKind, key: string, request: PendingInput): TimelineEntry {
  const entry: TimelineEntry = { at, kind, key, method: request.method };
  const message = request.params?.['message'];
  if (typeof message === 'string') entry.message = cap(message);
  return entry;
}

function answered(at: number, key: string, answer: InputAnswer): TimelineEntry {
  const entry: TimelineEntry = { at, kind: 'input_answered', key };
  if ('error' in answer) entry.error = true;
  return entry;
}

function cap(text: string): string {
  return text.length > MESSAGE_CAP ? `${text.slice(0, MESSAGE_CAP)}…` : text;
}
