import { describe, expect, it } from 'vitest';

import { PollSchedule } from '../../src/client/index.js';

describe('PollSchedule', () => {
  it("honours the server's pollInterval exactly (spec R18, E6)", () => {
    const schedule = new PollSchedule({}, () => 0.5);
    expect(schedule.next(1000)).toBe(1000);
    expect(schedule.next(1000)).toBe(1000);
    expect(schedule.next(0)).toBe(50);
  });

  it('backs off exponentially with jitter between 500 ms and 5 s without a hint', () => {
    const lowest = new PollSchedule({}, () => 1);
    const highest = new PollSchedule({}, () => 0);
    const low = Array.from({ length: 10 }, () => lowest.next());
    const high = Array.from({ length: 10 }, () => highest.next());
    expect(high[0]).toBe(500);
    expect(high.at(-1)).toBe(5000);
    for (let index = 1; index < high.length; index++)
      expect(high[index]).toBeGreaterThanOrEqual(high[index - 1] as number);
    // Jitter only shortens a gap, by at most a quarter.
    low.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(0.75 * (high[index] as number) - 1));
  });

  it('starts over after reset, and retries failures on the same curve', () => {
    const schedule = new PollSchedule({ initialMs: 100, maxMs: 1000, factor: 2, jitter: 0 });
    expect([schedule.next(), schedule.next(), schedule.next()]).toEqual([100, 200, 400]);
    schedule.reset();
    expect(schedule.next()).toBe(100);
    expect(schedule.retryDelay(5)).toBe(1000);
  });
});
