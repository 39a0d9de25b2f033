import type { EventOccurrence } from '../protocol/index.js';
import type { EventRing, RingEntry } from './EventRing.js';
import type { SubscriptionRequest } from './TaskEventSubscription.js';

/**
 * One subscription to an untasked type: its ring, the position read next, and who reads (an event addressed to
 * another principal is skipped as if it did not exist). Poll, push and webhook share it, so they resolve cursors and
 * ages alike.
 */
export class EmitSubscription {
  private constructor(
    readonly ring: EventRing,
    /** The authenticated principal reading, or undefined: then only the events addressed to nobody. */
    private readonly reader: string | undefined,
    /** The `seq` read next. */
    public position: number,
    /** Events were skipped resolving the cursor: said once, on the first answer (spec V30, V32, V33). */
    readonly truncated: boolean,
  ) {}

  /**
   * Resolves where to read from (the request's type, mode and arguments are checked already): a null or absent
   * cursor starts at the head (spec V24, V25); a cursor of an earlier process (a restart), or older than the oldest
   * event kept, restarts at the oldest kept with `truncated` (EVENTS-SPEC §12, spec V32, V33); `maxAgeMs` floors the
   * replay at now − maxAgeMs and says `truncated` when that skipped an event this reader would have had (V29, V30).
   */
  static open(
    ring: EventRing,
    reader: string | undefined,
    request: Pick<SubscriptionRequest, 'cursor' | 'maxAgeMs'>,
    now: number,
  ): EmitSubscription {
    // spec V31: maxAgeMs is ignored with a null cursor.
    if (request.cursor === null || request.cursor === undefined)
      return new EmitSubscription(ring, reader, ring.head, false);
    const position = ring.decode(request.cursor);
    const first = ring.first();
    if (position === 'stale' || position.seq < first) return new EmitSubscription(ring, reader, first, true);
    let from = position.seq;
    let skipped = false;
    if (request.maxAgeMs !== undefined) {
      const floor = now - request.maxAgeMs;
      for (const entry of ring.from(from)) {
        if (entry.at >= floor) break;
        from = entry.seq + 1;
        skipped ||= visibleTo(entry, reader);
      }
    }
    return new EmitSubscription(ring, reader, from, skipped);
  }

  /** The cursor of the current position (safe to persist: everything before it was delivered, spec V28). */
  get cursor(): string {
    return this.ring.encode(this.position);
  }

  /**
   * Reads on from the position: up to `max` events this reader may see, advancing past the others. `gap` tells that
   * the ring dropped events the position had not reached (a slow reader): the read restarted at the oldest kept
   * (spec V50). `more` tells that events remain unread.
   */
  next(max: number): { events: RingEntry[]; more: boolean; gap: boolean } {
    const first = this.ring.first();
    const gap = this.position < first;
    if (gap) this.position = first;
    const events: RingEntry[] = [];
    for (const entry of this.ring.from(this.position)) {
      if (events.length >= max) return { events, more: true, gap };
      this.position = entry.seq + 1;
      if (visibleTo(entry, this.reader)) events.push(entry);
    }
    return { events, more: false, gap };
  }
}

/** An event addressed to nobody is everyone's; one addressed to a principal is that principal's only. */
export function visibleTo(entry: RingEntry, reader: string | undefined): boolean {
  return entry.owner === null || entry.owner === reader;
}

/** The wire occurrence of a kept event, with the cursor after it (push, webhook). */
export function emittedOccurrence(ring: EventRing, entry: RingEntry): EventOccurrence {
  return { ...entry.occurrence, cursor: ring.encode(entry.seq + 1) };
}
