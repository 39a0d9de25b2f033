import { randomBytes } from 'node:crypto';

import { hasOfferAnswer, openOfferKeys, withOfferAnswers } from '../core/offers.js';
import { capStatusMessage } from './capStatusMessage.js';
import { REQUEUED_MESSAGE, type RecoveryDecision } from '../core/RecoveryPolicy.js';
import { StaleLeaseError } from '../run/StepJournal.js';
import { InvalidTransitionError, TaskTerminalError } from './TaskError.js';
import {
  INTERNAL_ERROR_CODE,
  type InputAnswer,
  type InputRequest,
  type PendingInput,
  type ProgressUpdate,
  type ReportedStatus,
  type TaskOutcome,
  type StoredProgress,
  type TaskRecord,
} from './TaskRecord.js';
import { canTransition, isTerminal, type TaskStatus } from './TaskStatus.js';

/**
 * The task lifecycle as pure functions: each takes the current record and returns the next one, or `null` for "no
 * change". They never modify their argument (stores may hand out frozen records) and never touch a store; the engine
 * runs them inside its compare-and-set loop, so a function may run again on a fresher record.
 */

/** A runner's claim handed out with a change: the process that runs the task next and until when it holds it. */
export interface LeaseGrant {
  runner: string;
  until: number;
}

/** A change that also says which input keys it added or took. */
export interface KeyedChange {
  record: TaskRecord;
  keys: string[];
}

export function isExpired(record: TaskRecord, now: number): boolean {
  return record.expiresAt !== null && record.expiresAt <= now;
}

/** The record with status `to`; throws for an illegal transition (spec R16 R17). */
export function moveTo(record: TaskRecord, to: TaskStatus): TaskRecord {
  if (!canTransition(record.status, to)) throw new InvalidTransitionError(record.taskId, record.status, to);
  return { ...record, status: to };
}

/** Ends the task: pending input and offers are dropped, the runner lets go, a keep-alive retention starts counting. */
export function toTerminal(
  record: TaskRecord,
  status: 'completed' | 'failed' | 'cancelled',
  now: number,
  statusMessage?: string,
): TaskRecord {
  const { runner: _runner, leaseUntil: _lease, offers: _offers, statusNote, ...rest } = moveTo(record, status);
  const next: TaskRecord = { ...rest, terminalAt: now, inputRequests: {}, inputAnswers: {} };
  if (statusMessage !== undefined) next.statusMessage = capStatusMessage(statusMessage);
  // A runtime note ("Re-running …") says nothing of how the task ended: a task ends on its work's word or on none.
  else if (statusNote) delete next.statusMessage;
  if (next.retention.kind === 'keepAlive') {
    next.expiresAt = next.retention.keepAliveMs === null ? null : now + next.retention.keepAliveMs;
  }
  return next;
}

/** A fresh input key: spec E10: a per-task counter keeps keys unique; the random part makes them unguessable. */
export function newInputKey(seq: number): string {
  return `input-${seq}-${randomBytes(16).toString('hex')}`;
}

/** Adds outstanding input requests to a non-terminal task and moves it to `input_required` (spec R23). */
export function addInputRequests(
  record: TaskRecord,
  requests: InputRequest[],
  now: number,
  keyFor: (seq: number) => string = newInputKey,
): KeyedChange {
  if (isTerminal(record.status)) throw new TaskTerminalError(record.taskId, record.status);
  // Knowing a task id is then not enough to answer its questions on the wire.
  const inputRequests = { ...record.inputRequests };
  let seq = record.nextInputSeq;
  const keys = requests.map((request) => {
    const key = keyFor(seq++);
    const pending: PendingInput = { method: request.method, createdAt: now };
    if (request.params !== undefined) pending.params = request.params;
    inputRequests[key] = pending;
    return key;
  });
  const next = { ...record, inputRequests, nextInputSeq: seq };
  return { record: next.status === 'working' ? moveTo(next, 'input_required') : next, keys };
}

/** Cancels a non-terminal task (spec R49: a terminal task cannot be cancelled); `by` is kept for its timeline. */
export function cancel(record: TaskRecord, now: number, statusMessage: string, by: string): TaskRecord {
  if (isTerminal(record.status)) throw new TaskTerminalError(record.taskId, record.status);
  return toTerminal({ ...record, cancelledBy: by }, 'cancelled', now, statusMessage);
}

/**
 * Records answers to outstanding requests and to open offers; other keys are ignored (spec E12). Once no request
 * remains the task is `working` again (spec R26), and a suspended task is resumed: `resumed` says the caller hands it
 * to the executor. An answer to an offer leaves the status alone but cuts a parked sleep short.
 */
export function answer(
  record: TaskRecord,
  answers: Record<string, InputAnswer>,
  lease: LeaseGrant | undefined,
): { record: TaskRecord; accepted: string[]; resumed: boolean } | null {
  if (isTerminal(record.status)) return null;
  const accepted = Object.keys(answers).filter((key) => key in record.inputRequests);
  const offered = openOfferKeys(record, answers).filter((key) => !accepted.includes(key));
  if (accepted.length === 0 && offered.length === 0) return null;
  const inputRequests = { ...record.inputRequests };
  const inputAnswers = { ...record.inputAnswers };
  for (const key of accepted) {
    delete inputRequests[key];
    inputAnswers[key] = answers[key] as InputAnswer;
  }
  let next: TaskRecord = { ...record, inputRequests, inputAnswers };
  if (offered.length > 0) next = withOfferAnswers(next, offered, answers);
  if (accepted.length > 0 && Object.keys(inputRequests).length === 0 && next.status === 'input_required') {
    next = moveTo(next, 'working');
  }
  // The suspended work runs again with the answers; whoever completed the set (or answered an offer) hands it over.
  const movedOn = next.status !== record.status;
  const resumed = next.status === 'working' && next.suspended === true && (movedOn || offered.length > 0);
  if (resumed) {
    const { suspended: _suspended, wakeAt: _wakeAt, ...rest } = next;
    next = withLease(rest, lease);
  }
  return { record: next, accepted: [...accepted, ...offered], resumed };
}

/**
 * Claims a task for a run: runner, lease, start time and one more attempt. Null when it is over, or when `attempt` is
 * given and is not the next one (two workers holding the same job cannot both start it).
 */
export function claim(
  record: TaskRecord,
  runner: string,
  now: number,
  leaseMs: number,
  attempt?: number,
): TaskRecord | null {
  if (isTerminal(record.status)) return null;
  if (attempt !== undefined && record.attempts + 1 !== attempt) return null;
  return { ...record, runner, leaseUntil: now + leaseMs, startedAt: now, attempts: record.attempts + 1 };
}

/**
 * Parks a task for input without holding its work in memory: adds the requests, merges `metaFor(keys)`, drops the
 * runner's lease (nothing runs, so nothing can be stale) and clears earlier answers.
 */
export function suspend(
  record: TaskRecord,
  requests: InputRequest[],
  metaFor: (keys: string[]) => Record<string, unknown>,
  now: number,
): KeyedChange {
  const added = addInputRequests({ ...record, inputAnswers: {} }, requests, now);
  const { runner: _runner, leaseUntil: _lease, ...rest } = added.record;
  return {
    record: { ...rest, meta: { ...rest.meta, ...metaFor(added.keys) }, suspended: true },
    keys: added.keys,
  };
}

/** How a workflow run parks: until a time and/or until its questions are answered. */
export interface ParkOptions {
  wakeAt?: number;
  requests?: InputRequest[];
  metaFor?: (keys: string[]) => Record<string, unknown>;
  /** A sleep: an answer to an offer that arrived while the run was ending wakes it at once. */
  endsOnOfferAnswer?: boolean;
}

/** Whether `attempt` (a run's claim) is no longer the task's latest: a later claim superseded that run. */
export function superseded(record: TaskRecord, attempt: number | undefined): boolean {
  return attempt !== undefined && record.attempts !== attempt;
}

/** Throws StaleLeaseError when `attempt` was superseded: the run asks and parks nothing more. */
export function requireAttempt(record: TaskRecord, attempt: number | undefined): void {
  if (superseded(record, attempt)) throw new StaleLeaseError(record.taskId, `attempt ${attempt} was superseded`);
}

/**
 * Parks the run `attempt` of a workflow task until `wakeAt` and/or until `requests` are answered. Null once the task
 * is over; throws StaleLeaseError for a superseded attempt.
 */
export function park(record: TaskRecord, attempt: number, options: ParkOptions, now: number): KeyedChange | null {
  const { requests = [] } = options;
  const wakeAt = options.endsOnOfferAnswer && hasOfferAnswer(record) ? now : options.wakeAt;
  if (isTerminal(record.status)) return null;
  requireAttempt(record, attempt);
  let next: TaskRecord = { ...record, inputAnswers: {} };
  let keys: string[] = [];
  if (requests.length > 0) ({ record: next, keys } = addInputRequests(next, requests, now));
  const { runner: _runner, leaseUntil: _lease, wakeAt: _wakeAt, ...rest } = next;
  next = { ...rest, suspended: true };
  if (options.metaFor) next.meta = { ...next.meta, ...options.metaFor(keys) };
  if (wakeAt !== undefined) next.wakeAt = wakeAt;
  return { record: next, keys };
}

/** Whether a durable timer set for `wakeAt` no longer concerns the task (it ended, or moved on to another timer). */
export function wakeIsStale(record: TaskRecord, wakeAt: number): boolean {
  return isTerminal(record.status) || !record.suspended || record.wakeAt !== wakeAt;
}

/**
 * Fires the durable timer set for `wakeAt`: a task still parked until then is `working` again (unanswered questions
 * are withdrawn) and goes to the executor. Null when the timer is stale or not due.
 */
export function wake(
  record: TaskRecord,
  wakeAt: number,
  now: number,
  lease: LeaseGrant | undefined,
): TaskRecord | null {
  if (wakeIsStale(record, wakeAt) || (record.wakeAt as number) > now) return null;
  const { suspended: _suspended, wakeAt: _wakeAt, ...rest } = record;
  let next: TaskRecord = rest;
  if (next.status === 'input_required') next = moveTo({ ...next, inputRequests: {} }, 'working');
  return withLease(next, lease);
}

/** Withdraws an outstanding input request (the work stopped waiting for it). */
export function withdrawInput(record: TaskRecord, key: string): TaskRecord | null {
  if (!(key in record.inputRequests) && !(key in record.inputAnswers)) return null;
  const inputRequests = { ...record.inputRequests };
  const inputAnswers = { ...record.inputAnswers };
  delete inputRequests[key];
  delete inputAnswers[key];
  const next = { ...record, inputRequests, inputAnswers };
  if (next.status === 'input_required' && Object.keys(inputRequests).length === 0) return moveTo(next, 'working');
  return next;
}

/** Removes a received answer once the work has taken it. */
export function takeAnswer(record: TaskRecord, key: string): TaskRecord | null {
  if (!(key in record.inputAnswers)) return null;
  const inputAnswers = { ...record.inputAnswers };
  delete inputAnswers[key];
  return { ...record, inputAnswers };
}

/** Merges `meta` into a task that has not ended. */
export function annotate(record: TaskRecord, meta: Record<string, unknown>): TaskRecord | null {
  if (isTerminal(record.status)) return null;
  return { ...record, meta: { ...record.meta, ...meta } };
}

export function setStatusMessage(record: TaskRecord, message: string): TaskRecord | null {
  const statusMessage = capStatusMessage(message);
  if (isTerminal(record.status) || (record.statusMessage === statusMessage && !record.statusNote)) return null;
  return { ...withoutNote(record), statusMessage };
}

/** Stores the work's latest progress (and its message as the statusMessage); spec R56: none once terminal. */
export function reportProgress(record: TaskRecord, update: ProgressUpdate): TaskRecord | null {
  if (isTerminal(record.status)) return null;
  return withProgress(record, update);
}

function withProgress(record: TaskRecord, update: ProgressUpdate): TaskRecord {
  const progress: StoredProgress = { progress: update.progress, seq: (record.progress?.seq ?? 0) + 1 };
  if (update.total !== undefined) progress.total = update.total;
  const next = { ...(update.message === undefined ? record : withoutNote(record)), progress };
  if (update.message !== undefined) {
    progress.message = capStatusMessage(update.message);
    next.statusMessage = progress.message;
  }
  return next;
}

/**
 * The run's last report written into the record as its outcome lands: a report the work's throttle still held, or
 * one whose own write has not landed yet, is not lost to the terminal write (a stale message on a finished task).
 */
function withReported(record: TaskRecord, reported: ReportedStatus | undefined): TaskRecord {
  if (reported?.progress !== undefined) {
    const { progress } = reported;
    return withProgress(record, reported.message === undefined ? progress : { ...progress, message: reported.message });
  }
  if (reported?.message !== undefined)
    return { ...withoutNote(record), statusMessage: capStatusMessage(reported.message) };
  return record;
}

/** The record with its statusMessage the work's own: the runtime's note is being replaced. */
function withoutNote(record: TaskRecord): TaskRecord {
  if (!record.statusNote) return record;
  const { statusNote: _note, ...rest } = record;
  return rest;
}

/** Moves an `input_required` task back to `working`; throws once terminal. */
export function resume(record: TaskRecord): TaskRecord | null {
  if (record.status === 'input_required') return moveTo(record, 'working');
  if (isTerminal(record.status)) throw new TaskTerminalError(record.taskId, record.status);
  return null;
}

/**
 * Stores the outcome exactly and ends the task `failed` or `completed` by the dialect's policy. Null once terminal
 * (spec R51: a cancelled task stays cancelled).
 */
export function complete(
  record: TaskRecord,
  outcome: TaskOutcome,
  now: number,
  statusMessage?: string,
  /** The run recording it: a run superseded by a later claim records nothing, heard of its supersession or not. */
  attempt?: number,
  /** The run's last report: it lands with the outcome; a failure's diagnostic still takes the statusMessage. */
  reported?: ReportedStatus,
): TaskRecord | null {
  if (isTerminal(record.status)) return null;
  if (superseded(record, attempt)) return null;
  const status = outcomeStatus(record, outcome);
  const message = statusMessage ?? (status === 'failed' ? failureMessage(outcome) : undefined);
  return toTerminal({ ...withReported(record, reported), outcome }, status, now, message);
}

/**
 * Applies the recovery decision to a task whose runner's lease lapsed: failed with the policy's message, or ready to
 * run again (pending input dropped, leased to `lease` when the executor leases on hand-over). Null when the lease is
 * no longer lapsed (renewed, or the task ended meanwhile).
 */
export function recover(
  record: TaskRecord,
  decision: RecoveryDecision,
  now: number,
  lease: LeaseGrant | undefined,
): TaskRecord | null {
  if (isTerminal(record.status) || record.leaseUntil === undefined || record.leaseUntil >= now) return null;
  // No run ever claimed it (it waited for a slot): nothing began, so it is queued again whatever its retry safety.
  if (record.attempts === 0) {
    const { runner: _runner, leaseUntil: _lease, ...rest } = record;
    const requeued: TaskRecord = {
      ...rest,
      recovery: 'requeued-before-start',
      recoveries: (record.recoveries ?? 0) + 1,
      statusMessage: REQUEUED_MESSAGE,
      statusNote: true,
    };
    return withLease(requeued, lease);
  }
  if (decision.action === 'fail') {
    const failed: TaskRecord = {
      ...record,
      recovery: 'failed-after-crash',
      outcome: { kind: 'error', error: { code: INTERNAL_ERROR_CODE, message: decision.statusMessage } },
    };
    return toTerminal(failed, 'failed', now, decision.statusMessage);
  }
  let next: TaskRecord = {
    ...record,
    recovery: 'rerun-after-crash',
    recoveries: (record.recoveries ?? 0) + 1,
    inputRequests: {},
    inputAnswers: {},
  };
  if (next.status === 'input_required') next = moveTo(next, 'working');
  next.statusMessage = `Re-running (attempt ${record.attempts + 1}): the runner of attempt ${record.attempts} stopped renewing its lease before recording an outcome`;
  next.statusNote = true;
  const { runner: _runner, leaseUntil: _lease, ...rest } = next;
  return withLease(rest, lease);
}

/** The record leased to `lease`'s runner; unchanged without one (the executor takes the lease when it starts). */
function withLease(record: TaskRecord, lease: LeaseGrant | undefined): TaskRecord {
  return lease ? { ...record, runner: lease.runner, leaseUntil: lease.until } : record;
}

/** spec R62 (2025-11-25: failed) vs E15 (extension: completed): the dialect chose at creation. */
function outcomeStatus(record: TaskRecord, outcome: TaskOutcome): 'completed' | 'failed' {
  if (outcome.kind === 'error') return 'failed';
  return outcome.result['isError'] === true ? record.toolErrorStatus : 'completed';
}

function failureMessage(outcome: TaskOutcome): string {
  if (outcome.kind === 'error') return `The request failed: ${outcome.error.message} (code ${outcome.error.code})`;
  const content = outcome.result['content'];
  if (Array.isArray(content)) {
    const text = content
      .map((block: unknown) => (block && typeof block === 'object' && 'text' in block ? String(block.text) : ''))
      .filter(Boolean)
      .join(' ');
    if (text) return `The tool reported an error: ${text.slice(0, 500)}`;
  }
  return 'The tool reported an error';
}
