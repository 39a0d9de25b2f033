import { ErrorCodes, RpcError } from '../rpc/index.js';
import type { StreamedEvent } from '../engine/index.js';
import type { EventOccurrence } from '../protocol/index.js';

const PREFIX = 'e2.';

/** One event of an untasked type, as the process keeps it. */
export interface RingEntry {
  seq: number;
  /** Epoch ms. */
  at: number;
  /** The one principal it is addressed to, or null: every caller who may subscribe to the type sees it. */
  owner: string | null;
  occurrence: EventOccurrence;
}

/** Where a cursor points in a ring: a position, or an earlier ring's (a restart): unknown here. */
export type RingPosition = { seq: number } | 'stale';

/**
 * The last events of one untasked type in this process (docs/events.md): at most `maxEvents`, none older than
 * `maxAgeMs`, so it never grows without a bound. Entries have consecutive `seq`s; a cursor names the ring's epoch (a
 * random id per ring, new at every start or restart), the type and the `seq` read next (spec V23), so a cursor of an
 * earlier process reads as stale (EVENTS-SPEC §12) and one of another type as invalid.
 */
export class EventRing {
  private entries: RingEntry[] = [];
  private nextSeq = 0;
  private readonly listeners = new Set<() => void>();
  private ended = false;

  constructor(
    readonly name: string,
    readonly epoch: string,
    private readonly maxEvents: number,
    private readonly maxAgeMs: number,
    private readonly now: () => number,
  ) {}

  /** The `seq` the next event gets: a cursor here starts from now (spec V24). */
  get head(): number {
    return this.nextSeq;
  }

  /** The `seq` of the oldest event kept (the head when none is). */
  first(): number {
    this.evictOld();
    return this.entries[0]?.seq ?? this.nextSeq;
  }

  /** Whether a restart replaced this ring: its subscriptions end. */
  get closed(): boolean {
    return this.ended;
  }

  /** Keeps an event, dropping the oldest past the bounds; wakes the streams of the type. */
  append(owner: string | null, data: Record<string, unknown>): RingEntry {
    return this.accept({ seq: this.nextSeq, at: this.now(), owner, data }) as RingEntry;
  }

  /**
   * Keeps an event a durable log numbered (StoredEventStream): one already kept is ignored (undefined); one past the
   * head means the log dropped events this ring never had, so the ring starts again from it (a reader behind it
   * hears of the gap, spec V50).
   */
  accept(event: StreamedEvent): RingEntry | undefined {
    const { seq } = event;
    if (seq < this.nextSeq) return undefined;
    if (seq > this.nextSeq) this.entries = [];
    this.nextSeq = seq + 1;
    const entry = this.entryOf(event);
    this.entries.push(entry);
    if (this.entries.length > this.maxEvents) this.entries.splice(0, this.entries.length - this.maxEvents);
    this.evictOld();
    this.wake();
    return entry;
  }

  /** An event as this ring's entries are, kept or not. */
  entryOf({ seq, at, owner, data }: StreamedEvent): RingEntry {
    return {
      seq,
      at,
      owner,
      occurrence: { eventId: `${this.epoch}.${seq}`, name: this.name, timestamp: new Date(at).toISOString(), data },
    };
  }

  /** The kept event numbered `seq`, if it is still kept. */
  at(seq: number): RingEntry | undefined {
    const base = this.entries[0]?.seq ?? this.nextSeq;
    return this.entries[seq - base];
  }

  /** Starts an empty ring at `seq` (a durable log's position): the events before it are not kept here. */
  startAt(seq: number): void {
    if (this.entries.length === 0 && seq > this.nextSeq) this.nextSeq = seq;
  }

  /** The entries from `seq` on (those still kept), in order (spec V41). */
  *from(seq: number): Generator<RingEntry> {
    this.evictOld();
    const base = this.entries[0]?.seq ?? this.nextSeq;
    for (let index = Math.max(0, seq - base); index < this.entries.length; index++)
      yield this.entries[index] as RingEntry;
  }

  encode(seq: number): string {
    return PREFIX + Buffer.from(JSON.stringify([this.name, this.epoch, seq])).toString('base64url');
  }

  /**
   * The position a cursor names: another epoch's is `stale` (a restart); one that does not parse, is another type's, or
   * lies past the head is -32602 (EVENTS-SPEC §4: truncated is for cursors that parse but fell out of retention).
   */
  decode(cursor: string): RingPosition {
    let decoded: unknown;
    try {
      decoded = cursor.startsWith(PREFIX)
        ? JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8'))
        : undefined;
    } catch {
      decoded = undefined;
    }
    const invalid = () =>
      new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: the cursor is not a cursor of this subscription');
    if (
      !Array.isArray(decoded) ||
      decoded.length !== 3 ||
      decoded[0] !== this.name ||
      typeof decoded[1] !== 'string' ||
      !Number.isSafeInteger(decoded[2]) ||
      (decoded[2] as number) < 0
    )
      throw invalid();
    if (decoded[1] !== this.epoch) return 'stale';
    if ((decoded[2] as number) > this.nextSeq) throw invalid();
    return { seq: decoded[2] as number };
  }

  /** Hears every append (and the ring's end); returns the removal. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A restart replaced the ring: its streams hear it and end. */
  close(): void {
    this.ended = true;
    this.wake();
    this.listeners.clear();
    this.entries = [];
  }

  private wake(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private evictOld(): void {
    const floor = this.now() - this.maxAgeMs;
    let drop = 0;
    while (drop < this.entries.length && (this.entries[drop] as RingEntry).at < floor) drop++;
    if (drop > 0) this.entries.splice(0, drop);
  }
}
