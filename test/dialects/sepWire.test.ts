import { describe, expect, it } from 'vitest';

import { sepStatus, toSepTask } from '../../src/dialects/index.js';
import { SEP_GENERATION } from '../../src/protocol/index.js';
import { makeRecord } from '../helpers/records.js';

describe('SEP-1686 task view', () => {
  it('4.3: a task is `submitted` until its work starts, then `working`', () => {
    expect(sepStatus(makeRecord({ attempts: 0 }))).toBe('submitted');
    expect(sepStatus(makeRecord({ attempts: 1 }))).toBe('working');
    expect(sepStatus(makeRecord({ status: 'input_required', attempts: 1 }))).toBe('input_required');
  });

  it('6: `unknown` is the fallback for a task whose run was lost in a crash; other failures stay `failed`', () => {
    expect(sepStatus(makeRecord({ status: 'failed', recovery: 'failed-after-crash', attempts: 1 }))).toBe('unknown');
    expect(sepStatus(makeRecord({ status: 'failed', attempts: 1 }))).toBe('failed');
  });

  it('3.2 7.2: shows the client’s own id, the actual keepAlive and the error of a failed task', () => {
    const record = makeRecord({
      dialect: SEP_GENERATION,
      idempotencyKey: 'client-id-1',
      status: 'failed',
      attempts: 1,
      statusMessage: 'Tool execution failed: API rate limit exceeded',
      retention: { kind: 'keepAlive', keepAliveMs: 30_000 },
      pollIntervalMs: 5000,
    });
    expect(toSepTask(record)).toEqual({
      taskId: 'client-id-1',
      status: 'failed',
      keepAlive: 30_000,
      pollFrequency: 5000,
      error: 'Tool execution failed: API rate limit exceeded',
    });
    expect(toSepTask({ ...record, retention: { kind: 'keepAlive', keepAliveMs: null } })['keepAlive']).toBeNull();
  });
});
