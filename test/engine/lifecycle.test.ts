import { describe, expect, it } from 'vitest';

import {
  INTERRUPTED_MESSAGE,
  InvalidTransitionError,
  StaleLeaseError,
  TaskTerminalError,
} from '../../src/engine/index.js';
import type { TaskRecord } from '../../src/engine/index.js';
import * as lifecycle from '../../src/engine/record/transitions.js';
import { makeRecord } from '../helpers/records.js';

// The lifecycle as record → record functions, with no store: every input is deeply frozen, so a function that edits
// its argument instead of returning a new record throws here (ESM is strict mode).

const NOW = 1_000_000;
const key = (seq: number) => `input-${seq}-k`;

function frozen(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return deepFreeze(makeRecord({ createdAt: NOW - 1000, ...overrides }));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

describe('pure task transitions', () => {
  it('moves between statuses only along legal transitions', () => {
    expect(lifecycle.moveTo(frozen(), 'input_required').status).toBe('input_required');
    expect(() => lifecycle.moveTo(frozen({ status: 'completed' }), 'working')).toThrow(InvalidTransitionError);
  });

  it('adds input requests with fresh keys and moves to input_required', () => {
    const { record, keys } = lifecycle.addInputRequests(
      frozen(),
      [{ method: 'elicitation/create', params: { message: 'why?' } }, { method: 'roots/list' }],
      NOW,
      key,
    );
    expect(keys).toEqual(['input-1-k', 'input-2-k']);
    expect(record.status).toBe('input_required');
    expect(record.nextInputSeq).toBe(3);
    expect(record.inputRequests['input-1-k']).toEqual({
      method: 'elicitation/create',
      params: { message: 'why?' },
      createdAt: NOW,
    });
    expect(() => lifecycle.addInputRequests(frozen({ status: 'failed' }), [{ method: 'x' }], NOW)).toThrow(
      TaskTerminalError,
    );
  });

  it('makes input keys unguessable by default', () => {
    const { keys } = lifecycle.addInputRequests(frozen(), [{ method: 'a' }, { method: 'b' }], NOW);
    expect(keys[0]).toMatch(/^input-1-[0-9a-f]{32}$/);
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('ends a task: drops pending input and the lease; a keep-alive starts counting', () => {
    const waiting = frozen({
      status: 'input_required',
      inputRequests: { k: { method: 'x', createdAt: 1 } },
      runner: 'r',
      leaseUntil: NOW + 5,
      retention: { kind: 'keepAlive', keepAliveMs: 500 },
      expiresAt: null,
    });
    const done = lifecycle.cancel(waiting, NOW, 'stopped', 'o');
    expect(done).toMatchObject({
      status: 'cancelled',
      statusMessage: 'stopped',
      terminalAt: NOW,
      expiresAt: NOW + 500,
    });
    expect(done.inputRequests).toEqual({});
    expect(done.cancelledBy).toBe('o');
    expect(done.runner).toBeUndefined();
    expect(done.leaseUntil).toBeUndefined();
    expect(() => lifecycle.cancel(done, NOW, 'again', 'o')).toThrow(TaskTerminalError);
  });

  it('completes by the dialect policy and never after a terminal status', () => {
    const result = { kind: 'result' as const, result: { isError: true, content: [{ type: 'text', text: 'boom' }] } };
    expect(lifecycle.complete(frozen({ toolErrorStatus: 'failed' }), result, NOW)).toMatchObject({
      status: 'failed',
      statusMessage: 'The tool reported an error: boom',
      outcome: result,
    });
    expect(lifecycle.complete(frozen({ toolErrorStatus: 'completed' }), result, NOW)?.status).toBe('completed');
    const error = { kind: 'error' as const, error: { code: -32000, message: 'no' } };
    expect(lifecycle.complete(frozen(), error, NOW)?.statusMessage).toBe('The request failed: no (code -32000)');
    // spec R51: a cancelled task stays cancelled.
    expect(lifecycle.complete(frozen({ status: 'cancelled' }), result, NOW)).toBeNull();
  });

  it('claims a run: runner, lease, one more attempt, only the expected attempt', () => {
    const claimed = lifecycle.claim(frozen({ attempts: 1 }), 'r1', NOW, 300);
    expect(claimed).toMatchObject({ runner: 'r1', leaseUntil: NOW + 300, startedAt: NOW, attempts: 2 });
    expect(lifecycle.claim(frozen({ attempts: 1 }), 'r1', NOW, 300, 3)).toBeNull();
    expect(lifecycle.claim(frozen({ attempts: 1 }), 'r1', NOW, 300, 2)?.attempts).toBe(2);
    expect(lifecycle.claim(frozen({ status: 'completed' }), 'r1', NOW, 300)).toBeNull();
  });

  it('answers input: ignores unknown keys, resumes once every request is answered', () => {
    const asked = frozen({
      status: 'input_required',
      inputRequests: { a: { method: 'x', createdAt: 1 }, b: { method: 'y', createdAt: 1 } },
    });
    expect(lifecycle.answer(asked, { zzz: { result: {} } }, undefined)).toBeNull();
    const half = lifecycle.answer(asked, { a: { result: { n: 1 } }, zzz: { result: {} } }, undefined);
    expect(half?.accepted).toEqual(['a']);
    expect(half?.record.status).toBe('input_required');
    expect(half?.record.inputAnswers).toEqual({ a: { result: { n: 1 } } });
    const all = lifecycle.answer(deepFreeze(half!.record), { b: { result: {} } }, undefined);
    expect(all?.record.status).toBe('working');
    expect(all?.resumed).toBe(false);
  });

  it('hands a suspended task over when its last question is answered', () => {
    const { record: parked } = lifecycle.suspend(
      frozen({ runner: 'r0', leaseUntil: NOW, inputAnswers: { old: { result: {} } } }),
      [{ method: 'x' }],
      (keys) => ({ asked: keys }),
      NOW,
    );
    expect(parked).toMatchObject({ suspended: true, status: 'input_required', inputAnswers: {} });
    expect(parked.runner).toBeUndefined();
    const [asked] = Object.keys(parked.inputRequests);
    expect(parked.meta).toEqual({ asked: [asked] });
    const answered = lifecycle.answer(
      deepFreeze(parked),
      { [asked as string]: { result: {} } },
      {
        runner: 'r1',
        until: NOW + 9,
      },
    );
    expect(answered?.resumed).toBe(true);
    expect(answered?.record).toMatchObject({ status: 'working', runner: 'r1', leaseUntil: NOW + 9 });
    expect(answered?.record.suspended).toBeUndefined();
  });

  it('parks a workflow run until a timer, refuses a superseded attempt, wakes when due', () => {
    const running = frozen({ attempts: 2, runner: 'r', leaseUntil: NOW + 10 });
    expect(() => lifecycle.park(running, 1, { wakeAt: NOW + 100 }, NOW)).toThrow(StaleLeaseError);
    const parked = lifecycle.park(running, 2, { wakeAt: NOW + 100 }, NOW)!.record;
    expect(parked).toMatchObject({ status: 'working', suspended: true, wakeAt: NOW + 100 });
    expect(parked.runner).toBeUndefined();
    deepFreeze(parked);
    expect(lifecycle.wake(parked, NOW + 100, NOW + 50, undefined)).toBeNull();
    expect(lifecycle.wakeIsStale(parked, NOW + 99)).toBe(true);
    const woken = lifecycle.wake(parked, NOW + 100, NOW + 100, { runner: 'r2', until: NOW + 200 });
    expect(woken).toMatchObject({ status: 'working', runner: 'r2', leaseUntil: NOW + 200 });
    expect(woken?.suspended).toBeUndefined();
    expect(woken?.wakeAt).toBeUndefined();
  });

  it('withdraws a question and takes an answer', () => {
    const asked = frozen({ status: 'input_required', inputRequests: { a: { method: 'x', createdAt: 1 } } });
    expect(lifecycle.withdrawInput(asked, 'a')?.status).toBe('working');
    expect(lifecycle.withdrawInput(asked, 'nope')).toBeNull();
    const answered = frozen({ inputAnswers: { a: { result: {} } } });
    expect(lifecycle.takeAnswer(answered, 'a')?.inputAnswers).toEqual({});
    expect(lifecycle.takeAnswer(answered, 'b')).toBeNull();
  });

  it('stores progress with a growing sequence and the message as statusMessage, not after the end', () => {
    const first = lifecycle.reportProgress(frozen(), { progress: 1, total: 4, message: 'one' });
    expect(first).toMatchObject({ progress: { progress: 1, total: 4, message: 'one', seq: 1 }, statusMessage: 'one' });
    expect(lifecycle.reportProgress(deepFreeze(first!), { progress: 2 })?.progress).toEqual({ progress: 2, seq: 2 });
    expect(lifecycle.reportProgress(frozen({ status: 'failed' }), { progress: 2 })).toBeNull();
    expect(lifecycle.setStatusMessage(frozen({ statusMessage: 'same' }), 'same')).toBeNull();
    expect(lifecycle.annotate(frozen({ meta: { a: 1 } }), { b: 2 })?.meta).toEqual({ a: 1, b: 2 });
    expect(lifecycle.resume(frozen({ status: 'input_required' }))?.status).toBe('working');
    expect(lifecycle.resume(frozen())).toBeNull();
  });

  it('recovers a lapsed run: fails it, or readies a re-run with the next lease', () => {
    const lapsed = frozen({
      status: 'input_required',
      retrySafe: true,
      attempts: 1,
      runner: 'dead',
      leaseUntil: NOW - 1,
      inputRequests: { a: { method: 'x', createdAt: 1 } },
    });
    expect(
      lifecycle.recover(frozen({ runner: 'r', leaseUntil: NOW + 1 }), { action: 'rerun' }, NOW, undefined),
    ).toBeNull();
    const failed = lifecycle.recover(lapsed, { action: 'fail', statusMessage: INTERRUPTED_MESSAGE }, NOW, undefined);
    expect(failed).toMatchObject({
      status: 'failed',
      recovery: 'failed-after-crash',
      statusMessage: INTERRUPTED_MESSAGE,
    });
    const queued = lifecycle.recover(lapsed, { action: 'rerun' }, NOW, undefined);
    expect(queued).toMatchObject({
      status: 'working',
      recovery: 'rerun-after-crash',
      recoveries: 1,
      inputRequests: {},
    });
    expect(queued?.runner).toBeUndefined();
    expect(queued?.leaseUntil).toBeUndefined();
    const leased = lifecycle.recover(lapsed, { action: 'rerun' }, NOW, { runner: 'me', until: NOW + 5 });
    expect(leased).toMatchObject({ runner: 'me', leaseUntil: NOW + 5 });
  });
});
