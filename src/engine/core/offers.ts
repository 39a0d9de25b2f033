import { StaleLeaseError } from '../run/StepJournal.js';
import type { InputAnswer, StandingOffer, TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';

/**
 * Standing offers (`step.offer`) as pure record → record functions, in the style of transitions.ts: an offer is added
 * by the run that made it, answered once by the requestor, and consumed by the run that checked it.
 */

/** Most offers one task may hold. */
export const MAX_OFFERS_PER_TASK = 64;

/** An offer key travels in wire ids (`mcp-tasks-input:<taskId>:<key>`), so it is plain and bounded. */
export const OFFER_KEY_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/**
 * Registers the offer `key` for the run `attempt`; the first offer of a key stands (a replay's re-offer is no
 * change). Null once the task is over; throws StaleLeaseError for a superseded attempt.
 */
export function addOffer(
  record: TaskRecord,
  attempt: number,
  key: string,
  request: { method: string; params?: Record<string, unknown> },
  now: number,
): TaskRecord | null {
  if (isTerminal(record.status)) return null;
  if (record.attempts !== attempt) throw new StaleLeaseError(record.taskId, `attempt ${attempt} was superseded`);
  if (record.offers && key in record.offers) return null;
  const offer: StandingOffer = { method: request.method, createdAt: now };
  if (request.params !== undefined) offer.params = request.params;
  return { ...record, offers: { ...record.offers, [key]: offer } };
}

/** Keys among `answers` that name an offer not answered yet (the first answer wins). */
export function openOfferKeys(record: TaskRecord, answers: Record<string, InputAnswer>): string[] {
  const offers = record.offers ?? {};
  return Object.keys(answers).filter((key) => Object.hasOwn(offers, key) && !offers[key]?.answered);
}

/** The record with the answers to open offers `keys` stored; the status does not change. */
export function withOfferAnswers(record: TaskRecord, keys: string[], answers: Record<string, InputAnswer>): TaskRecord {
  const offers = { ...record.offers };
  for (const key of keys) offers[key] = { ...(offers[key] as StandingOffer), answered: true, answer: answers[key] };
  return { ...record, offers };
}

/** Whether an answer to an offer waits for the work to consume it (it cuts sleeps short until then). */
export function hasOfferAnswer(record: TaskRecord): boolean {
  return Object.values(record.offers ?? {}).some((offer) => offer.answer !== undefined);
}

/**
 * Drops the answer to `key` once the run `attempt` journaled its consumption; the offer stays answered. Null when
 * there is none; throws StaleLeaseError for a superseded attempt.
 */
export function consumeOffer(record: TaskRecord, attempt: number, key: string): TaskRecord | null {
  if (record.attempts !== attempt) throw new StaleLeaseError(record.taskId, `attempt ${attempt} was superseded`);
  const offer = record.offers?.[key];
  if (offer?.answer === undefined) return null;
  const { answer: _answer, ...rest } = offer;
  return { ...record, offers: { ...record.offers, [key]: rest } };
}
