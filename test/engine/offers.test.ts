import { describe, expect, it } from 'vitest';

import { StaleLeaseError, type TaskRecord } from '../../src/engine/index.js';
import * as offers from '../../src/engine/core/offers.js';
import * as lifecycle from '../../src/engine/record/transitions.js';
import { makeRecord } from '../helpers/records.js';

// Standing offers as record → record functions on deeply frozen records (a function editing its argument throws).

const NOW = 2_000_000;
const STOP = { method: 'elicitation/create', params: { message: 'Stop?' } };
const YES = { result: { action: 'accept', content: { stop: true } } };

function frozen(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return deepFreeze(makeRecord({ createdAt: NOW - 1000, attempts: 1, ...overrides }));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** A task of attempt 1 holding the offer `stop`. */
function offered(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return deepFreeze(offers.addOffer(frozen(overrides), 1, 'stop', STOP, NOW) as TaskRecord);
}

describe('standing offers', () => {
  it('adds an offer without moving the status; the first offer of a key stands; a stale attempt is refused', () => {
    const record = offered();
    expect(record.status).toBe('working');
    expect(record.offers).toEqual({
      stop: { method: 'elicitation/create', params: { message: 'Stop?' }, createdAt: NOW },
    });
    expect(record.inputRequests).toEqual({});
    expect(offers.addOffer(record, 1, 'stop', { method: 'other' }, NOW + 1)).toBeNull();
    expect(() => offers.addOffer(frozen({ attempts: 2 }), 1, 'stop', STOP, NOW)).toThrow(StaleLeaseError);
    expect(offers.addOffer(frozen({ status: 'cancelled' }), 1, 'stop', STOP, NOW)).toBeNull();
  });

  it('takes the first answer of an offer, keeps the status, ignores later answers and unknown keys (spec E12)', () => {
    const first = lifecycle.answer(offered(), { stop: YES, nope: { result: {} } }, undefined);
    expect(first?.accepted).toEqual(['stop']);
    expect(first?.resumed).toBe(false);
    expect(first?.record.status).toBe('working');
    expect(first?.record.offers?.['stop']).toMatchObject({ answered: true, answer: YES });
    const answered = deepFreeze(first!.record);
    expect(lifecycle.answer(answered, { stop: { result: { action: 'decline' } } }, undefined)).toBeNull();
    expect(offers.hasOfferAnswer(answered)).toBe(true);
    // Consumed: the answer goes, the offer stays answered, so a second answer is still ignored.
    const consumed = deepFreeze(offers.consumeOffer(answered, 1, 'stop') as TaskRecord);
    expect(consumed.offers?.['stop']).toMatchObject({ answered: true });
    expect(consumed.offers?.['stop']?.answer).toBeUndefined();
    expect(offers.hasOfferAnswer(consumed)).toBe(false);
    expect(lifecycle.answer(consumed, { stop: YES }, undefined)).toBeNull();
    expect(offers.consumeOffer(consumed, 1, 'stop')).toBeNull();
    expect(() => offers.consumeOffer(answered, 0, 'stop')).toThrow(StaleLeaseError);
  });

  it('an answer cuts a parked sleep short, but does not resume a task parked on a question', () => {
    const sleeping = deepFreeze(lifecycle.park(offered(), 1, { wakeAt: NOW + 10_000 }, NOW)!.record);
    expect(sleeping).toMatchObject({ status: 'working', suspended: true, wakeAt: NOW + 10_000 });
    expect(sleeping.offers?.['stop']).toBeDefined();
    const woken = lifecycle.answer(sleeping, { stop: YES }, { runner: 'r2', until: NOW + 50 });
    expect(woken?.resumed).toBe(true);
    expect(woken?.record).toMatchObject({ status: 'working', runner: 'r2', leaseUntil: NOW + 50 });
    expect(woken?.record.suspended).toBeUndefined();
    expect(woken?.record.wakeAt).toBeUndefined();

    const asking = deepFreeze(lifecycle.park(offered(), 1, { requests: [{ method: 'q' }] }, NOW)!.record);
    expect(asking.status).toBe('input_required');
    const stillAsking = lifecycle.answer(asking, { stop: YES }, undefined);
    expect(stillAsking?.resumed).toBe(false);
    expect(stillAsking?.record).toMatchObject({ status: 'input_required', suspended: true });
  });

  it('a sleep parked while an answer waits unconsumed wakes at once; other parks keep their time', () => {
    const answered = deepFreeze(lifecycle.answer(offered(), { stop: YES }, undefined)!.record);
    const sleep = lifecycle.park(answered, 1, { wakeAt: NOW + 10_000, endsOnOfferAnswer: true }, NOW)!.record;
    expect(sleep.wakeAt).toBe(NOW);
    const retry = lifecycle.park(answered, 1, { wakeAt: NOW + 10_000 }, NOW)!.record;
    expect(retry.wakeAt).toBe(NOW + 10_000);
    const quiet = lifecycle.park(offered(), 1, { wakeAt: NOW + 10_000, endsOnOfferAnswer: true }, NOW)!.record;
    expect(quiet.wakeAt).toBe(NOW + 10_000);
  });

  it('offers survive parking, waking and recovery, and are dropped when the task ends', () => {
    const parked = deepFreeze(lifecycle.park(offered(), 1, { wakeAt: NOW + 5 }, NOW)!.record);
    const woken = deepFreeze(lifecycle.wake(parked, NOW + 5, NOW + 5, undefined) as TaskRecord);
    expect(Object.keys(woken.offers ?? {})).toEqual(['stop']);
    const lapsed = offered({ runner: 'dead', leaseUntil: NOW - 1, retrySafe: true });
    expect(Object.keys(lifecycle.recover(lapsed, { action: 'rerun' }, NOW, undefined)?.offers ?? {})).toEqual(['stop']);
    const done = lifecycle.complete(offered(), { kind: 'result', result: {} }, NOW);
    expect(done?.offers).toBeUndefined();
  });

  it('accepts plain keys only, since they travel in wire ids', () => {
    expect(offers.OFFER_KEY_PATTERN.test('stop')).toBe(true);
    expect(offers.OFFER_KEY_PATTERN.test('stop-now.v2_x')).toBe(true);
    expect(offers.OFFER_KEY_PATTERN.test('a:b')).toBe(false);
    expect(offers.OFFER_KEY_PATTERN.test('')).toBe(false);
    expect(offers.OFFER_KEY_PATTERN.test('x'.repeat(129))).toBe(false);
  });
});
