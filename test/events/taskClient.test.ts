import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf, type TaskEvent } from '../../src/client/index.js';
import { createMcpTasks, serveHttp } from '../../src/server/index.js';
import { createEventsServer, STAGE, startEventsServer, type EventsServer } from './eventsServer.js';

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

describe('TaskClient follows a task’s event source (Task Event Sources, TS14–TS19)', () => {
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

  it('TS14 TS17: iterates the task’s events live over push, and the iteration ends with the task', async () => {
    const methods: string[] = [];
    const count = (request: { headers: Record<string, string | string[] | undefined> }) =>
      methods.push(String(request.headers['mcp-method']));
    server.http.server.on('request', count);
    const handle = await client.callTool('staged', { stages: 3, stageMs: 40 });
    expect(handle.isTask).toBe(true);
    expect(handle.eventSource).toMatchObject({ name: STAGE, input: { taskId: handle.taskId } });
    const events = await collect(handle.events());
    expect(events.map((event) => event.data)).toEqual([
      { index: 0, of: 3 },
      { index: 1, of: 3 },
      { index: 2, of: 3 },
    ]);
    expect(events.map((event) => event.eventId)).toEqual([0, 1, 2].map((seq) => `${handle.taskId}:${seq}`));
    for (const event of events) expect(event.cursor).toBeTypeOf('string');
    server.http.server.off('request', count);
    // Pushed on one stream, never polled.
    expect(methods.filter((name) => name === 'events/stream')).toHaveLength(1);
    expect(methods).not.toContain('events/poll');
    // TS15: the task is still followed through tasks/get: the result arrives as ever.
    expect(textOf(await handle.result())).toBe('3 stages');
  });

  it('resumes from a persisted cursor (after a restart: a new client, the kept event source)', async () => {
    const handle = await client.callTool('staged', { stages: 3, stageMs: 5 });
    const source = handle.eventSource;
    const [first] = await collect(
      (async function* () {
        for await (const event of handle.events()) {
          yield event;
          return;
        }
      })(),
    );
    await handle.result();
    const restarted = await TaskClient.connect({ url: server.http.url });
    try {
      const rest = await collect(restarted.followEvents(source!, { cursor: first!.cursor }));
      expect(rest.map((event) => (event.data as { index: number }).index)).toEqual([1, 2]);
    } finally {
      await restarted.close();
    }
  });

  it('polls when asked to, at the server’s pace, and ends once the task ended', async () => {
    const handle = await client.callTool('staged', { stages: 2, stageMs: 30 });
    const events = await collect(handle.events({ mode: 'poll', pollFloorMs: 20 }));
    expect(events.map((event) => (event.data as { index: number }).index)).toEqual([0, 1]);
    expect(events.at(-1)?.cursor).toBeTypeOf('string');
  });

  it('TS1 V6: a server without Events names no source; events() ends at once and followEvents is refused', async () => {
    const tasks = await createMcpTasks({ server: createEventsServer, tools: { staged: 'optional' }, store: 'memory' });
    const http = await serveHttp(tasks, { port: 0 });
    const plain = await TaskClient.connect({ url: http.url });
    try {
      const handle = await plain.callTool('staged', { stages: 1, stageMs: 0 });
      expect(handle.isTask).toBe(true);
      expect(handle.eventSource).toBeUndefined();
      expect(await collect(handle.events())).toEqual([]);
      expect(() => plain.followEvents({ name: STAGE, input: { taskId: handle.taskId } })).toThrow(/Events/);
      await handle.result();
    } finally {
      await plain.close();
      await http.close();
      await tasks.close();
    }
  });
});
