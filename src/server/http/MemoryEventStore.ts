import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

export interface EventStoreLimits {
  /** Bytes of events one session keeps. */
  maxBytesPerSession: number;
  /** How long the events of an answered stream are kept for a client whose connection dropped to resume it. */
  answeredRetentionMs: number;
}

/** The bytes every session's event store holds together, against one cap. */
export class EventStoreBudget {
  used = 0;
  readonly stores = new Set<MemoryEventStore>();

  constructor(readonly maxBytes: number) {}

  /** Evicts from the largest stores until the total fits: the session holding most pays first. */
  settle(): void {
    while (this.used > this.maxBytes) {
      let largest: MemoryEventStore | undefined;
      for (const store of this.stores) if (!largest || store.bytes > largest.bytes) largest = store;
      if (!largest || !largest.evictOne()) return;
    }
  }
}

interface StoredEvent {
  seq: number;
  message: JSONRPCMessage;
  bytes: number;
}

interface Stream {
  events: StoredEvent[];
  answeredAt?: number;
}

/** Per-event bookkeeping counted on top of the message itself. */
const EVENT_OVERHEAD_BYTES = 64;

/**
 * Keeps the SSE events of one 2025-era session so a client whose stream dropped can resume it with `Last-Event-ID`:
 * a long `tasks/result` that loses its connection still gets its response (otherwise the SDK reports it
 * undeliverable). Bounded: a stream that got its answer is dropped after `answeredRetentionMs`; past the session's
 * byte cap (or the budget shared by all sessions) answered streams go first, oldest first, then the oldest events of
 * streams still open. Event ids are `<streamId>:<seq>`, so an id still names its stream after its event is gone.
 */
export class MemoryEventStore implements EventStore {
  private readonly streams = new Map<string, Stream>();
  /** Answered streams, oldest answer first. */
  private readonly answered = new Map<string, number>();
  private sequence = 0;
  bytes = 0;

  constructor(
    private readonly budget: EventStoreBudget,
    private readonly limits: EventStoreLimits,
    private readonly now: () => number = Date.now,
  ) {
    budget.stores.add(this);
  }

  /** Stores `message`; `serialized`, its JSON when the caller has it already, saves serialising it again to count it. */
  async storeEvent(streamId: string, message: JSONRPCMessage, serialized?: string): Promise<string> {
    return this.store(streamId, message, serialized);
  }

  /** `storeEvent` at once: the event id, for a writer that must not wait a turn to know it. */
  store(streamId: string, message: JSONRPCMessage, serialized?: string): string {
    this.pruneAnswered();
    const seq = ++this.sequence;
    const bytes = (serialized ?? JSON.stringify(message)).length + EVENT_OVERHEAD_BYTES;
    let stream = this.streams.get(streamId);
    if (!stream) this.streams.set(streamId, (stream = { events: [] }));
    stream.events.push({ seq, message, bytes });
    this.account(bytes);
    if (isResponse(message)) {
      // The stream's request is answered (the last one, for a batch).
      stream.answeredAt = this.now();
      this.answered.delete(streamId);
      this.answered.set(streamId, stream.answeredAt);
    }
    while (this.bytes > this.limits.maxBytesPerSession && this.evictOne(streamId));
    this.budget.settle();
    return `${streamId}:${seq}`;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const streamId = streamOf(eventId);
    return streamId !== undefined && this.streams.has(streamId) ? streamId : undefined;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = streamOf(lastEventId) ?? '';
    const after = Number(lastEventId.slice(streamId.length + 1));
    for (const event of this.streams.get(streamId)?.events ?? []) {
      // Priming events carry no message: nothing to replay.
      if (event.seq > after && Object.keys(event.message).length > 0)
        await send(`${streamId}:${event.seq}`, event.message);
    }
    return streamId;
  }

  /**
   * Frees some bytes: an answered stream other than `keep` (oldest answer first), else the oldest event that is not a
   * response, else the oldest event. Responses go last: they are what a resuming client is waiting for. False when
   * empty.
   */
  evictOne(keep?: string): boolean {
    for (const streamId of this.answered.keys()) {
      if (streamId === keep) continue;
      this.dropStream(streamId);
      return true;
    }
    for (const pass of ['other', 'any'] as const) {
      for (const [streamId, stream] of this.streams) {
        const index = pass === 'any' ? 0 : stream.events.findIndex((event) => !isResponse(event.message));
        const [event] = index < 0 ? [] : stream.events.splice(index, 1);
        if (!event) continue;
        if (stream.events.length === 0) this.dropStream(streamId);
        this.account(-event.bytes);
        return true;
      }
    }
    return false;
  }

  /** Releases everything (the session closed). */
  clear(): void {
    for (const streamId of [...this.streams.keys()]) this.dropStream(streamId);
    this.budget.stores.delete(this);
  }

  get streamCount(): number {
    return this.streams.size;
  }

  private pruneAnswered(): void {
    const cutoff = this.now() - this.limits.answeredRetentionMs;
    for (const [streamId, answeredAt] of this.answered) {
      if (answeredAt > cutoff) break;
      this.dropStream(streamId);
    }
  }

  private dropStream(streamId: string): void {
    const stream = this.streams.get(streamId);
    this.streams.delete(streamId);
    this.answered.delete(streamId);
    for (const event of stream?.events ?? []) this.account(-event.bytes);
  }

  private account(bytes: number): void {
    this.bytes += bytes;
    this.budget.used += bytes;
  }
}

function isResponse(message: JSONRPCMessage): boolean {
  return 'id' in message && !('method' in message);
}

function streamOf(eventId: string): string | undefined {
  const separator = eventId.lastIndexOf(':');
  return separator > 0 ? eventId.slice(0, separator) : undefined;
}
