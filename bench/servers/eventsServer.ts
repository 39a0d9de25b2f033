// Benchmark server of `npm run bench:events`: mcp-tasks with Events on HTTP, one event type its tools emit.
// BENCH_STORE memory | sqlite | redis | postgres, BENCH_STORE_URL (the file, or the server's URL) and BENCH_SCOPE (the
// Redis key prefix or PostgreSQL schema, so that two processes share one store and nothing else). Callers are named by
// their bearer token. BENCH_MAX_STREAMS_PER_OWNER raises the documented `events.maxStreamsPerOwner`;
// BENCH_WEBHOOK_ORIGIN turns on webhook delivery from the store's outbox, that origin allowlisted.
// Prints "listening on <url>" on stderr; SIGUSR2 prints its memory after a full collection (run with --expose-gc) and
// the plain calls in progress; with BENCH_SNAPSHOT_DIR it also writes a heap snapshot there (memory-<n>.heapsnapshot).
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import type { TaskStore } from '../../src/engine/index.js';
import type { EventsOptions } from '../../src/events/index.js';
import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { createMcpTasks, serveHttp } from '../../src/server/index.js';
import { MemoryStore, PostgresStore, RedisStore, SqliteStore } from '../../src/stores/index.js';
import { emitTaskEvent } from '../../src/workflow/index.js';

export const TICK = 'com.example.bench.tick';

/** Plain `sleep_plain` calls in progress. */
let held = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Epoch ms, sub-millisecond: the emit time each event carries, compared with its arrival in another process. */
const preciseNow = () => performance.timeOrigin + performance.now();

function createServer(): McpServer {
  const server = new McpServer({ name: 'bench-events', version: '1' });
  server.registerTool(
    'emit_paced',
    {
      description: 'From `startAt` (epoch ms), emits `count` events `intervalMs` apart, each with its emit time',
      inputSchema: z.object({ count: z.number(), intervalMs: z.number(), startAt: z.number() }),
    },
    async ({ count, intervalMs, startAt }, ctx) => {
      await sleep(startAt - Date.now());
      for (let n = 0; n < count; n++) {
        await emitTaskEvent(ctx, TICK, { n, at: preciseNow() });
        await sleep(intervalMs);
      }
      return { content: [{ type: 'text', text: `${count} events` }] };
    },
  );
  server.registerTool(
    'emit_burst',
    {
      description: 'From `startAt` (epoch ms), emits `count` events as fast as the store takes them',
      inputSchema: z.object({ count: z.number(), startAt: z.number() }),
    },
    async ({ count, startAt }, ctx) => {
      await sleep(startAt - Date.now());
      for (let n = 0; n < count; n++) await emitTaskEvent(ctx, TICK, { n, at: preciseNow() });
      return { content: [{ type: 'text', text: `${count} events` }] };
    },
  );
  server.registerTool(
    'hold',
    { description: 'Works for `ms`, emitting nothing', inputSchema: z.object({ ms: z.number() }) },
    async ({ ms }) => {
      await sleep(ms);
      return { content: [{ type: 'text', text: 'held' }] };
    },
  );
  // Not a task tool: a plain call held open as long as a stream, to compare what any held request costs.
  server.registerTool(
    'sleep_plain',
    { description: 'Answers after `ms`, as a plain call', inputSchema: z.object({ ms: z.number() }) },
    async ({ ms }) => {
      held++;
      await sleep(ms);
      held--;
      return { content: [{ type: 'text', text: 'slept' }] };
    },
  );
  return server;
}

function openStore(): TaskStore {
  const url = process.env['BENCH_STORE_URL'] ?? '';
  const scope = process.env['BENCH_SCOPE'] ?? '';
  switch (process.env['BENCH_STORE']) {
    case 'redis':
      return new RedisStore({ url, keyPrefix: scope });
    case 'postgres':
      return new PostgresStore({ connectionString: url, schema: scope });
    case 'sqlite':
      return new SqliteStore({ path: url });
    default:
      return new MemoryStore();
  }
}

const store = openStore();
const webhookOrigin = process.env['BENCH_WEBHOOK_ORIGIN'];
let webhooks: OutboxWebhookDeliveries | undefined;
if (webhookOrigin) {
  const outbox = store.webhooks;
  if (!outbox) throw new Error('this store keeps no webhook outbox');
  await store.init();
  await outbox.init();
  webhooks = new OutboxWebhookDeliveries({
    store: outbox,
    policy: new CallbackPolicy({ allowOrigins: [webhookOrigin] }),
  });
}
const maxStreamsPerOwner = process.env['BENCH_MAX_STREAMS_PER_OWNER'];
const events: EventsOptions = {
  types: [
    {
      name: TICK,
      description: 'An intermediate result, with the time it was emitted',
      payloadSchema: {
        type: 'object',
        properties: { n: { type: 'integer', minimum: 0 }, at: { type: 'number' } },
        required: ['n', 'at'],
      },
      tools: ['emit_paced', 'emit_burst', 'hold'],
    },
  ],
  ...(webhooks && { webhooks }),
  ...(maxStreamsPerOwner && { maxStreamsPerOwner: Number(maxStreamsPerOwner) }),
};

const tasks = await createMcpTasks({
  server: createServer,
  tools: {
    emit_paced: { taskSupport: 'optional', pollIntervalMs: 1000 },
    emit_burst: { taskSupport: 'optional', pollIntervalMs: 1000 },
    hold: { taskSupport: 'optional', pollIntervalMs: 1000 },
  },
  store,
  rateLimit: false,
  // A burst's log holds more than the default 1,000 entries; the subscription bench holds 10,000 tasks of one owner.
  limits: { eventsPerTask: 1_000_000, maxActivePerOwner: 1_000_000, maxStoredPerOwner: 1_000_000 },
  events,
});
webhooks?.start();
const http = await serveHttp(tasks, {
  port: 0,
  authenticate: ((request: Request) => {
    const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
    return token ? { token, clientId: token, scopes: [] } : undefined;
  }) as never,
});
console.error(`listening on ${http.url}`);
const snapshotDir = process.env['BENCH_SNAPSHOT_DIR'];
let snapshots = 0;
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  // Once the figures are taken, so writing the snapshot does not count in them.
  if (snapshotDir) writeHeapSnapshot(join(snapshotDir, `memory-${++snapshots}.heapsnapshot`));
  console.error(`rss ${rss} heap ${heapUsed} external ${external} arrayBuffers ${arrayBuffers} held ${held}`);
});
process.on('SIGTERM', () => {
  void (async () => {
    await http.close();
    await webhooks?.stop();
    await tasks.close();
    process.exit(0);
  })();
});
