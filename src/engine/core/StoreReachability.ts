import type { Clock } from '../contracts/Clock.js';

/**
 * When this process last found the store failing or slow to answer (slower than a lease renewal tick). A lease that
 * lapsed then says nothing of its runner: the runner could not reach the store either. Lease recovery waits until the
 * store has answered steadily for a whole lease, which gives every live runner time to renew (spec R49: a runner still
 * holding an outcome records it once the store is back).
 */
export class StoreReachability {
  private troubleAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    /** An answer this slow counts as trouble: a runner's renewal (every third of a lease) may have missed its tick. */
    private readonly slowAnswerMs: number,
  ) {}

  /** Runs a store operation, noting a failure or a slow answer. */
  async watch<T>(operation: () => Promise<T>, isOutage: (error: unknown) => boolean): Promise<T> {
    const began = this.clock.now();
    try {
      const result = await operation();
      if (this.clock.now() - began >= this.slowAnswerMs) this.troubleAt = this.clock.now();
      return result;
    } catch (error) {
      if (isOutage(error)) this.troubleAt = this.clock.now();
      throw error;
    }
  }

  /** How long the store has answered steadily, as of `now`. */
  steadyFor(now: number): number {
    return now - this.troubleAt;
  }
}
