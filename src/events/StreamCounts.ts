import { ErrorCodes, RpcError } from '../rpc/index.js';

/**
 * Open `events/stream`s per caller and in all (spec TS13, V115): a stream past either bound is refused with -32013
 * before it opens, naming the limit. Streams are exempt from the task rate limits (V58), so this is their bound.
 */
export class StreamCounts {
  private readonly perOwner = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly maxPerOwner: number,
    private readonly max: number,
  ) {}

  /** Counts a stream of `owner`; returns its release. */
  take(owner: string): () => void {
    const held = this.perOwner.get(owner) ?? 0;
    if (held >= this.maxPerOwner)
      throw new RpcError(
        ErrorCodes.EVENTS_RESOURCE_EXHAUSTED,
        `Too many open event streams for this caller (limit ${this.maxPerOwner}); close one first`,
        { limit: 'event_streams', max: this.maxPerOwner },
      );
    if (this.total >= this.max)
      throw new RpcError(
        ErrorCodes.EVENTS_RESOURCE_EXHAUSTED,
        `Too many open event streams on this server (limit ${this.max}); try again later`,
        { limit: 'event_streams_total', max: this.max },
      );
    this.perOwner.set(owner, held + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.perOwner.get(owner) ?? 1) - 1;
      if (left > 0) this.perOwner.set(owner, left);
      else this.perOwner.delete(owner);
    };
  }

  get open(): number {
    return this.total;
  }
}
