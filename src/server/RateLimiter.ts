import { TaskLimitError } from '../engine/index.js';

export interface RateLimit {
  /** Sustained task operations per second per owner. Default 50. */
  perSecond: number;
  /** Operations allowed in a burst above the sustained rate. Default 100. */
  burst: number;
}

export const DEFAULT_RATE_LIMIT: RateLimit = { perSecond: 50, burst: 100 };

/** A token bucket per owner for task operations (spec R69). */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = Date.now,
  ) {}

  take(owner: string): void {
    const now = this.now();
    const bucket = this.buckets.get(owner) ?? { tokens: this.limit.burst, at: now };
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limit.perSecond);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.buckets.set(owner, bucket);
      throw new TaskLimitError(
        'rate',
        `Rate limit exceeded: at most ${this.limit.perSecond} task operations per second`,
      );
    }
    bucket.tokens -= 1;
    this.buckets.set(owner, bucket);
    // Full buckets carry no information; dropping them keeps memory bounded by the active owners.
    if (this.buckets.size > 10_000) {
      for (const [key, value] of this.buckets) if (value.tokens >= this.limit.burst - 1) this.buckets.delete(key);
    }
  }
}
