import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

/**
 * Keeps the SSE events of one 2025-era session so a client whose stream dropped can resume it with `Last-Event-ID`:
 * a long `tasks/result` that loses its connection still gets its response (otherwise the SDK reports it
 * undeliverable). Bounded per stream; it lives and dies with its session.
 */
export class MemoryEventStore implements EventStore {
  private readonly events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  private readonly streams = new Map<string, string[]>();
  private sequence = 0;

  constructor(private readonly maxEventsPerStream = 1000) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = `${streamId}:${++this.sequence}`;
    this.events.set(eventId, { streamId, message });
    const ids = this.streams.get(streamId) ?? [];
    ids.push(eventId);
    while (ids.length > this.maxEventsPerStream) this.events.delete(ids.shift() as string);
    this.streams.set(streamId, ids);
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = this.events.get(lastEventId)?.streamId ?? '';
    const ids = this.streams.get(streamId) ?? [];
    for (const eventId of ids.slice(ids.indexOf(lastEventId) + 1)) {
      const event = this.events.get(eventId);
      // Priming events carry no message: nothing to replay.
      if (event && Object.keys(event.message).length > 0) await send(eventId, event.message);
    }
    return streamId;
  }
}
