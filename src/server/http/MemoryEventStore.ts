import Denque from 'denque';

import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

import type { BudgetedStore, EventStoreBudget } from './EventStoreBudget.js';

export interface EventStoreLimits {
  /** Bytes of events one session keeps. */
  maxBytesPerSession: number;
  /** How long the events of an answered stream are kept for a client whose connection dropped to resume it. */
  answeredRetentionMs: number;
}

interface StoredEvent {
  seq: number;
  /** The message as JSON, `''` for a priming event: a string costs the collector nothing to trace and is what is written. */
  json: string;
  response: boolean;
  bytes: number;
}

interface Stream {
  readonly id: string;
  events: StoredEvent[];
  /** When its (last) response came. */
  answeredAt?: number;
  /** Its places in the answered queue: more than one when a batch's responses answered it again. */
  queued: number;
}

/**
 * The memory an event and a stream take besides the event's text (records, list slots, map entries, the stream's id),
 * measured with `npm run bench:event-store`, so the byte caps bound the memory the events really hold.
 */
const EVENT_OVERHEAD_BYTES = 96;
const STREAM_OVERHEAD_BYTES = 224;

/**
 * The same string, flat. `randomUUID` (which names streams) returns a tree of its pieces, some 400 bytes more than
 * the flat string for as long as it is kept (as a map key, too); matching a regular expression flattens it in place.
 */
function flat(text: string): string {
  FLATTENS.test(text);
  return text;
}
const FLATTENS = /^/;

/** The memory a string of JSON takes: one byte a character, two when a character is beyond Latin-1. */
function textBytes(json: string): number {
  return /[\u0100-\uffff]/.test(json) ? 2 * json.length : json.length;
}

/**
 * Keeps the SSE events of one 2025-era session so a client whose stream dropped can resume it with `Last-Event-ID`:
 * a long `tasks/result` that loses its connection still gets its response (otherwise the SDK reports it
 * undeliverable). Bounded: a stream that got its answer is dropped after `answeredRetentionMs`; past the session's
 * byte cap (or the budget shared by all sessions) answered streams go first, oldest first, then the oldest events of
 * streams still open. Event ids are `<streamId>:<seq>`, so an id still names its stream after its event is gone.
 */
export class MemoryEventStore implements EventStore, BudgetedStore {
  private readonly streams = new Map<string, Stream>();
  /**
   * Answered streams, oldest answer first. A queue, not a Map iterated from its front: a Map keeps the
   * slots of its deleted entries until it is rebuilt, and iterating past them cost tens of microseconds an event once
   * thousands of streams had been dropped. A stream that is gone, or queued again later, is skipped when reached.
   */
  private readonly answered = new Denque<Stream>();
  private sequence = 0;
  bytes = 0;

  constructor(
    private readonly budget: EventStoreBudget,
    private readonly limits: EventStoreLimits,
    private readonly now: () => number = Date.now,
  ) {
    budget.stores.add(this);
  }

  /** Stores `message`; `serialized`, its JSON when the caller has it already, saves serialising it again. */
  async storeEvent(streamId: string, message: JSONRPCMessage, serialized?: string): Promise<string> {
    return this.store(streamId, message, serialized);
  }

  /** `storeEvent` at once: the event id, for a writer that must not wait a turn to know it. */
  store(streamId: string, message: JSONRPCMessage, serialized?: string): string {
    this.pruneAnswered();
    const seq = ++this.sequence;
    // A priming event carries no message.
    const json = 'jsonrpc' in message ? (serialized ?? JSON.stringify(message)) : '';
    const response = isResponse(message);
    const event: StoredEvent = { seq, json, response, bytes: textBytes(json) + EVENT_OVERHEAD_BYTES };
    let stream = this.streams.get(streamId);
    if (!stream) {
      const id = flat(streamId);
      this.streams.set(id, (stream = { id, events: [event], queued: 0 }));
      this.account(STREAM_OVERHEAD_BYTES);
    }
    // Most streams hold two events (priming, response): a list of exactly two, where a push would reserve seventeen.
    else if (stream.events.length === 1) stream.events = [stream.events[0] as StoredEvent, event];
    else stream.events.push(event);
    this.account(event.bytes);
    if (response) {
      // The stream's request is answered (the last one, for a batch).
      stream.answeredAt = this.now();
      stream.queued++;
      this.answered.push(stream);
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
    const { streamId, events } = this.streamAfter(lastEventId);
    for (const [eventId, json] of events) await send(eventId, JSON.parse(json) as JSONRPCMessage);
    return streamId;
  }

  /** The ids and JSON of the events of `lastEventId`'s stream after it, priming events left out. */
  eventsAfter(lastEventId: string): Array<[eventId: string, json: string]> {
    return this.streamAfter(lastEventId).events;
  }

  private streamAfter(lastEventId: string): { streamId: string; events: Array<[eventId: string, json: string]> } {
    const streamId = streamOf(lastEventId) ?? '';
    const after = Number(lastEventId.slice(streamId.length + 1));
    const events = (this.streams.get(streamId)?.events ?? [])
      .filter((event) => event.seq > after && event.json !== '')
      .map((event): [string, string] => [`${streamId}:${event.seq}`, event.json]);
    return { streamId, events };
  }

  /**
   * Frees some bytes: an answered stream other than `keep` (oldest answer first), else the oldest event that is not a
   * response, else the oldest event. Responses go last: they are what a resuming client is waiting for. False when
   * empty.
   */
  evictOne(keep?: string): boolean {
    for (let i = 0; i < this.answered.length; i++) {
      const stream = this.answered.peekAt(i) as Stream;
      if (stream.id === keep && this.isLatest(stream)) continue;
      if (this.takeAnswered(i)) {
        this.dropStream(stream.id);
        return true;
      }
      i--;
    }
    for (const pass of ['other', 'any'] as const) {
      for (const [streamId, stream] of this.streams) {
        const index = pass === 'any' ? 0 : stream.events.findIndex((event) => !event.response);
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
    this.answered.clear();
    this.budget.stores.delete(this);
  }

  get streamCount(): number {
    return this.streams.size;
  }

  /**
   * Whether `stream`'s entry in the answered queue is its last answer, the stream still there: an earlier entry of a
   * stream answered again is not.
   */
  private isLatest(stream: Stream): boolean {
    return stream.queued === 1 && this.streams.get(stream.id) === stream;
  }

  /** Takes the answered queue's entry at `index` off; true when it was its stream's last answer (see `isLatest`). */
  private takeAnswered(index: number): boolean {
    const stream = (index === 0 ? this.answered.shift() : this.answered.removeOne(index)) as Stream;
    const latest = this.isLatest(stream);
    stream.queued--;
    return latest;
  }

  private pruneAnswered(): void {
    const cutoff = this.now() - this.limits.answeredRetentionMs;
    for (let stream = this.answered.peekFront(); stream; stream = this.answered.peekFront()) {
      // An entry that is not its stream's last answer goes whatever its age: the stream is gone or queued again.
      if (this.isLatest(stream) && (stream.answeredAt as number) > cutoff) return;
      if (this.takeAnswered(0)) this.dropStream(stream.id);
    }
  }

  private dropStream(streamId: string): void {
    const stream = this.streams.get(streamId);
    if (!stream) return;
    this.streams.delete(streamId);
    this.account(-STREAM_OVERHEAD_BYTES);
    for (const event of stream.events) this.account(-event.bytes);
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
