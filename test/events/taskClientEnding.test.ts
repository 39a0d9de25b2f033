import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { TaskClient, textOf, type TaskEvent } from '../../src/client/index.js';
import { DRAIN_MS, followEventSource, type FollowContext } from '../../src/client/EventSourceFollower.js';
import type { RawChannel } from '../../src/client/RawChannel.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { emitTaskEvent } from '../../src/workflow/index.js';

const BURST = 'com.example.burst';
const COUNT = 25;

/** `burst` waits, then emits `count` events back to back and returns at once: its last events race its end. */
function createBurstServer(): McpServer {
  const server = new McpServer({ name: 'burst-test', version: '1.0.0' });
  server.registerTool(
    'burst',
    { inputSchema: z.object({ count: z.number(), delayMs: z.number() }) },
    async ({ count, delayMs }, ctx) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      for (let index = 0; index < count; index++) await emitTaskEvent(ctx, BURST, { index });
      return { content: [{ type: 'text', text: `${count} events` }] };
    },
  );
  return server;
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

const indexes = Array.from({ length: COUNT }, (_, index) => index);

// spec TS9 TS17 TS18 TS19
describe('TaskClient: events() yields every event a task emitted before it ended, with status followed', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  let client: TaskClient;
  beforeAll(async () => {
    tasks = await createMcpTasks({
      server: createBurstServer,
      tools: { burst: { taskSupport: 'optional', pollIntervalMs: 50 } },
      store: 'memory',
      events: {
        types: [
          {
            name: BURST,
            description: 'One of a burst of events',
            payloadSchema: { type: 'object', properties: { index: { type: 'integer' } }, required: ['index'] },
            tools: ['burst'],
          },
        ],
        // Small poll pages: the last poll after the end reads on with hasMore.
        maxPollEvents: 10,
      },
    });
    http = await serveHttp(tasks, { port: 0 });
    client = await TaskClient.connect({ url: http.url });
  });
  afterAll(async () => {
    await client.close();
    await http.close();
    await tasks.close();
  });

  for (const mode of ['poll', 'push'] as const) {
    it(`${mode}: all ${COUNT} events, in order, when they come right before the task ends (5 runs)`, async () => {
      for (let run = 0; run < 5; run++) {
        const handle = await client.callTool('burst', { count: COUNT, delayMs: 150 });
        expect(handle.eventSource).toMatchObject({ name: BURST });
        const started = Date.now();
        const [events, result] = await Promise.all([
          collect(handle.events(mode === 'poll' ? { mode } : {})),
          handle.result(),
        ]);
        expect(textOf(result)).toBe(`${COUNT} events`);
        expect(events.map((event) => (event.data as { index: number }).index)).toEqual(indexes);
        expect(events.map((event) => event.eventId)).toEqual(indexes.map((index) => `${handle.taskId}:${index}`));
        // Ended with the task, not by a poll interval (1 s by default) or the drain bound (2 s).
        expect(Date.now() - started).toBeLessThan(1500);
      }
    });
  }
});

// spec TS9: a source that never answers once the task was seen terminal ends the iteration after DRAIN_MS.
describe('followEventSource: a dead source does not hang a follow whose task was seen terminal', () => {
  /** A channel whose requests are never answered (until aborted) and that delivers no notification. */
  const dead: FollowContext = {
    raw: {
      request: (_method: string, _params: unknown, options: { signal?: AbortSignal } = {}) => ({
        id: 'dead',
        reply: new Promise((_resolve, reject) =>
          options.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        ),
      }),
      onNotification: () => () => undefined,
    } as unknown as RawChannel,
    envelope: () => ({}),
    cancelByStream: true,
  };

  for (const mode of ['poll', 'push'] as const) {
    it(`${mode}: ends about DRAIN_MS after the task was seen terminal`, async () => {
      const ending = new AbortController();
      setTimeout(() => ending.abort(), 50);
      const started = Date.now();
      const events = await collect(
        followEventSource(dead, { name: BURST, input: { taskId: 't' } }, { mode, ending: ending.signal }),
      );
      expect(events).toEqual([]);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(DRAIN_MS);
      expect(took).toBeLessThan(DRAIN_MS + 1000);
    });
  }
});
