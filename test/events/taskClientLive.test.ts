import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { TaskClient, textOf, type TaskEvent } from '../../src/client/index.js';
import { gates, startEventsServer, type EventsServer } from './eventsServer.js';

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

/** Counts the `events/*` requests the server receives, by method. */
function countMethods(server: EventsServer): { methods: string[]; stop(): void } {
  const methods: string[] = [];
  const count = (request: { headers: Record<string, string | string[] | undefined> }) =>
    methods.push(String(request.headers['mcp-method']));
  server.http.server.on('request', count);
  return { methods, stop: () => server.http.server.off('request', count) };
}

describe('TaskClient: a task seen terminal ends its event follow once what it emitted is read (TS17–TS19)', () => {
  let server: EventsServer;
  let client: TaskClient;
  beforeAll(async () => {
    server = await startEventsServer('memory');
    client = await TaskClient.connect({ url: server.http.url });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });

  // spec TS17 TS18 TS19
  it('reads the event the task emitted before its end with one last poll once the handle saw the end', async () => {
    // Polled slowly: the one event is emitted after the first poll, and the task ends long before the next one.
    const handle = await client.callTool('staged', { stages: 1, stageMs: 200 });
    const counted = countMethods(server);
    const started = Date.now();
    const [events, result] = await Promise.all([
      collect(handle.events({ mode: 'poll', pollFloorMs: 2000 })),
      handle.result(),
    ]);
    counted.stop();
    expect(textOf(result)).toBe('1 stages');
    expect(events.map((event) => event.data)).toEqual([{ index: 0, of: 1 }]);
    // Ended with the handle's terminal status, not by the poll interval: the first poll, then one last at the end.
    expect(Date.now() - started).toBeLessThan(1500);
    expect(counted.methods.filter((method) => method === 'events/poll')).toHaveLength(2);
    // The event is in the log: a follow of the task now (already terminal) replays it.
    expect((await collect(handle.events({ mode: 'poll' }))).map((event) => event.data)).toEqual([{ index: 0, of: 1 }]);
  });

  it('yields the events that arrive while the task runs, followed beside its result', async () => {
    const gate = `live-${Date.now()}`;
    const handle = await client.callTool('staged', { stages: 2, stageMs: 20, gate });
    const seen: TaskEvent[] = [];
    const following = (async () => {
      for await (const event of handle.events()) {
        seen.push(event);
        if (seen.length === 2) gates.get(gate)?.();
      }
    })();
    const result = await handle.result();
    await following;
    expect(textOf(result)).toBe('2 stages');
    expect(seen.map((event) => event.data)).toEqual([
      { index: 0, of: 2 },
      { index: 1, of: 2 },
    ]);
  });

  it("ends the follow at once when the caller's signal aborts, and the task runs on", async () => {
    const gate = `stop-${Date.now()}`;
    const handle = await client.callTool('staged', { stages: 1, stageMs: 20, gate });
    const stop = new AbortController();
    const seen: TaskEvent[] = [];
    for await (const event of handle.events({ signal: stop.signal })) {
      seen.push(event);
      // The task now waits at its gate, emitting nothing: only the signal can end this loop.
      stop.abort();
    }
    expect(seen).toHaveLength(1);
    expect(handle.isSettled).toBe(false);
    await vi.waitFor(() => expect(gates.has(gate)).toBe(true));
    gates.get(gate)?.();
    expect(textOf(await handle.result())).toBe('1 stages');
  });
});

describe('TaskClient: a push stream silent past twice the heartbeat is opened again (V59)', () => {
  // spec V59
  it('reconnects from the last cursor when the server sends no heartbeat, and still gets every event', async () => {
    const server = await startEventsServer('memory', { heartbeatMs: 60_000 });
    const client = await TaskClient.connect({ url: server.http.url });
    const counted = countMethods(server);
    try {
      const handle = await client.callTool('staged', { stages: 2, stageMs: 450 });
      const events = await collect(handle.events({ heartbeatMs: 100 }));
      expect(events.map((event) => event.data)).toEqual([
        { index: 0, of: 2 },
        { index: 1, of: 2 },
      ]);
      // Silent for 450 ms before each event, with a 200 ms dead-stream time: several streams, each from the cursor.
      expect(counted.methods.filter((method) => method === 'events/stream').length).toBeGreaterThanOrEqual(3);
      expect(counted.methods).not.toContain('events/poll');
    } finally {
      counted.stop();
      await client.close();
      await server.close();
    }
  });

  it('keeps one stream while the server’s heartbeats come in time', async () => {
    const server = await startEventsServer('memory', { heartbeatMs: 50 });
    const client = await TaskClient.connect({ url: server.http.url });
    const counted = countMethods(server);
    try {
      const handle = await client.callTool('staged', { stages: 2, stageMs: 450 });
      const events = await collect(handle.events({ heartbeatMs: 100 }));
      expect(events).toHaveLength(2);
      expect(counted.methods.filter((method) => method === 'events/stream')).toHaveLength(1);
    } finally {
      counted.stop();
      await client.close();
      await server.close();
    }
  });
});
