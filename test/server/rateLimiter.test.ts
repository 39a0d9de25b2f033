import { describe, expect, it } from 'vitest';

import { TaskLimitError } from '../../src/engine/index.js';
import { RateLimiter } from '../../src/server/limits/RateLimiter.js';

/** The pollInterval a second poll of `taskId` in a row is refused with (pollBurst 1). */
function refusedInterval(limiter: RateLimiter, taskId: string): unknown {
  const who = { key: 'client' };
  limiter.take(who, 'poll', taskId);
  try {
    limiter.take(who, 'poll', taskId);
  } catch (error) {
    expect(error).toBeInstanceOf(TaskLimitError);
    return (error as TaskLimitError).details?.['pollIntervalMs'];
  }
  return undefined;
}

describe('RateLimiter', () => {
  it('measures polls against the pollInterval advertised for the task, remembering the 100,000 advertised last', () => {
    const now = 1_000_000;
    const limiter = new RateLimiter({ perSecond: 1e9, burst: 1e9, pollBurst: 1 }, 1000, () => now);
    const who = { key: 'client' };
    limiter.advertised(who, 'first', 60_000);
    limiter.advertised(who, 'again', 30_000);
    for (let i = 0; i < 50_000; i++) limiter.advertised(who, `task-${i}`, 60_000);
    // Advertised again: it is among the latest now.
    limiter.advertised(who, 'again', 30_000);
    for (let i = 50_000; i < 100_000; i++) limiter.advertised(who, `task-${i}`, 60_000);
    expect(refusedInterval(limiter, 'first')).toBe(1000);
    expect(refusedInterval(limiter, 'again')).toBe(30_000);
    expect(refusedInterval(limiter, 'task-99999')).toBe(60_000);
    expect(refusedInterval(limiter, 'never-advertised')).toBe(1000);
    // What another client was told does not shape this client's polls.
    limiter.advertised({ key: 'other' }, 'fresh', 60_000);
    expect(refusedInterval(limiter, 'fresh')).toBe(1000);
  });
});
