import { describe, expect, it } from 'vitest';

import { CallAdmission, CallRefusedError } from '../../src/proxy/index.js';

/** Plain calls the gateway forwards at once: bounded per caller and in all, a short queue, then a clear refusal. */
describe('CallAdmission', () => {
  it('lets one caller fan out only to its share; the rest wait in order, and past the queue are refused', async () => {
    const admission = new CallAdmission({ maxInFlightPerCaller: 4, maxQueuedPerCaller: 8, maxWaitMs: 60_000 });
    let inFlight = 0;
    let peak = 0;
    const releases: Array<() => void> = [];
    const order: number[] = [];
    // 40 calls at once from one caller, as in the reproduced finding (40 went upstream at once).
    const outcomes = Array.from({ length: 40 }, (_, index) =>
      admission.enter('alice').then(
        (release) => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          order.push(index);
          releases.push(() => {
            inFlight--;
            release();
          });
          return 'admitted' as const;
        },
        (error: unknown) => error,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(inFlight).toBe(4);
    // Drain: each release lets the next waiter in.
    while (releases.length > 0) {
      (releases.shift() as () => void)();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const settled = await Promise.all(outcomes);
    expect(peak).toBe(4);
    expect(settled.filter((outcome) => outcome === 'admitted')).toHaveLength(12);
    expect(order).toEqual([...Array(12).keys()]);
    const refusal = settled.find((outcome) => outcome instanceof CallRefusedError) as CallRefusedError;
    expect(refusal.limit).toBe('upstream_calls');
    expect(refusal.details).toMatchObject({ maxInFlight: 4, maxQueued: 8, retryAfterMs: expect.any(Number) });
    expect(refusal.message).toMatch(/Too many upstream calls: at most 4 per caller/);
  });

  it("one caller's backlog does not hold up another caller", async () => {
    const admission = new CallAdmission({ maxInFlight: 3, maxInFlightPerCaller: 2, maxQueuedPerCaller: 10 });
    const alice = await Promise.all([admission.enter('alice'), admission.enter('alice')]);
    const aliceWaiting = admission.enter('alice');
    // Bob fits (3 in all), though Alice has a call waiting.
    const bob = await admission.enter('bob');
    let aliceAdmitted = false;
    void aliceWaiting.then(() => (aliceAdmitted = true));
    bob();
    await new Promise((resolve) => setImmediate(resolve));
    expect(aliceAdmitted).toBe(false);
    (alice[0] as () => void)();
    await aliceWaiting;
    expect(aliceAdmitted).toBe(true);
  });

  it('refuses a call that waited past maxWaitMs, and lets an aborted one go', async () => {
    const admission = new CallAdmission({ maxInFlightPerCaller: 1, maxWaitMs: 50 });
    const held = await admission.enter('alice');
    await expect(admission.enter('alice')).rejects.toThrow(/no slot came free within 50 ms/);
    const controller = new AbortController();
    const waiting = admission.enter('alice', controller.signal);
    controller.abort(new Error('the caller went away'));
    await expect(waiting).rejects.toThrow('the caller went away');
    held();
    const next = await admission.enter('alice');
    next();
  });

  it('refuses settings that are not whole numbers', () => {
    expect(() => new CallAdmission({ maxInFlight: 0 })).toThrow(TypeError);
    expect(() => new CallAdmission({ maxWaitMs: 1.5 })).toThrow(TypeError);
  });
});
