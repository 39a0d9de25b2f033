import { randomBytes } from 'node:crypto';

import type { EventStreamLog, NewStreamedEvent, StreamedEvent } from '../../engine/index.js';

interface Stream {
  epoch: string;
  /** The seq the next append gets. */
  next: number;
  /** The kept entries as JSON text, oldest first (the first has seq `next - entries.length`), read back as copies. */
  entries: string[];
}

/** The untasked event types' bounded logs in process memory. */
export class MemoryEventStreams implements EventStreamLog {
  private readonly streams = new Map<string, Stream>();

  async init(): Promise<void> {}

  async epoch(stream: string): Promise<string> {
    return this.streamOf(stream).epoch;
  }

  async append(stream: string, event: NewStreamedEvent, keep: number): Promise<number> {
    const log = this.streamOf(stream);
    const seq = log.next++;
    const entry: StreamedEvent = { seq, at: event.at, owner: event.owner, data: event.data };
    log.entries.push(JSON.stringify(entry));
    const excess = log.entries.length - Math.max(1, keep);
    if (excess > 0) log.entries.splice(0, excess);
    return seq;
  }

  async read(stream: string, from: number, limit: number): Promise<StreamedEvent[]> {
    const log = this.streams.get(stream);
    if (!log || limit <= 0) return [];
    const first = log.next - log.entries.length;
    const start = Math.max(from, first) - first;
    return log.entries.slice(start, start + limit).map((text) => JSON.parse(text) as StreamedEvent);
  }

  async head(stream: string): Promise<number> {
    return this.streams.get(stream)?.next ?? 0;
  }

  private streamOf(stream: string): Stream {
    let log = this.streams.get(stream);
    if (!log) this.streams.set(stream, (log = { epoch: randomBytes(6).toString('base64url'), next: 0, entries: [] }));
    return log;
  }
}
