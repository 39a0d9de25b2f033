/** A token bucket's shape: tokens added per second, and how many it holds. */
export interface BucketShape {
  perSecond: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets by key with bounded memory: full buckets carry no information and are dropped first; past a hard cap
 * the least recently used go, so a flood of distinct keys costs a fixed amount of memory.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Takes one token; returns 0 when it was there, else the milliseconds until one will be. */
  take(key: string, shape: BucketShape): number {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: shape.burst, at: now };
    bucket.tokens = Math.min(shape.burst, bucket.tokens + ((now - bucket.at) / 1000) * shape.perSecond);
    bucket.at = now;
    // Re-inserted so the map's order is least recently used first.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxKeys) this.trim(shape);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - bucket.tokens) / shape.perSecond) * 1000));
  }

  /** Gives back a token taken by a request that was refused by a later check. */
  refund(key: string, shape: BucketShape): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(shape.burst, bucket.tokens + 1);
  }

  get size(): number {
    return this.buckets.size;
  }

  private trim(shape: BucketShape): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * shape.perSecond >= shape.burst) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.maxKeys * 0.9) break;
      this.buckets.delete(key);
    }
  }
}
