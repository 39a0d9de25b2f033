/** One event of an untasked type, as a store keeps it. */
export interface StreamedEvent {
  /** Per stream, from 0; the store numbers appends without gaps or repeats across every process. */
  seq: number;
  /** When it was emitted (epoch ms). */
  at: number;
  /** The one principal's owner it is addressed to, or null: every caller who may subscribe to the type. */
  owner: string | null;
  /** A JSON object (spec V20). */
  data: Record<string, unknown>;
}

/** What the emitter hands the log; the log numbers it. */
export type NewStreamedEvent = Omit<StreamedEvent, 'seq'>;

/**
 * The durable, bounded logs of the untasked event types that ask for one (`retain.durable`): one log ("stream") per
 * type name, shared by every process on the store, so a poll, push stream or webhook on any instance serves what any
 * other instance or queue worker emitted, and a cursor stays valid across restarts. Unlike a task's event log it
 * drops its oldest entries: an append keeps the newest `keep` and removes the rest, so a stream never grows without
 * a bound. Every store passes the shared event stream contract suite.
 */
export interface EventStreamLog {
  init(): Promise<void>;
  /**
   * The stream's epoch: a random id made by the first process to use it and kept with it, the same for every process
   * on the store. A cursor names it, so a cursor of a store that was wiped (a new epoch) reads as stale, not as a
   * position in other events.
   */
  epoch(stream: string): Promise<string>;
  /** Appends the stream's next entry and drops all but the newest `keep` (≥ 1); answers the entry's `seq`. */
  append(stream: string, event: NewStreamedEvent, keep: number): Promise<number>;
  /** Up to `limit` entries with `seq >= from` (those still kept), in `seq` order. */
  read(stream: string, from: number, limit: number): Promise<StreamedEvent[]>;
  /** The `seq` the stream's next entry gets (0 for a stream never appended to). */
  head(stream: string): Promise<number>;
}

/** The key under which an append to a stream is announced on the store's TaskEventBus, across processes. */
export function eventStreamTopic(stream: string): string {
  return `mcp-tasks-stream:${stream}`;
}
