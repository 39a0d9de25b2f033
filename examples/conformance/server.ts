// The conformance fixture server: `npm run serve:conformance` (HTTP on 127.0.0.1:$PORT/mcp) or `--stdio`.
// Store from MCP_TASKS_STORE (memory, a SQLite path; default: SQLite in a temporary directory).
// MCP_TASKS_REQUEST_STATE_KEY: the HMAC key sealing the fixtures' requestState (default: random, per process).
// MCP_TASKS_TOOL_CONCURRENCY: per-tool concurrency limits, `tool:n,tool:n`.
// MCP_TASKS_TOOL_EVENTS: a file to which every tool start, end and abort of tasks run here is appended (tests).
// MCP_TASKS_LEASE_MS, MCP_TASKS_WAKE_INTERVAL_MS: the engine's `leaseMs` and `wakeIntervalMs` (its wake-at index poll).
// MCP_TASKS_EVENTS=1: serve the Events extension (docs/events.md) with the fixture's event types (`staged_compute`'s),
// the conformance suite's diagnostic controls (`events_conformance_*` tools, EVENTS-SPEC §14), an untasked clock type
// emitting every 1.5 s, and, on a memory or SQLite store, webhook delivery (`https://conformance.invalid/mcp-events/`
// allowlisted).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

import { createMcpTasks, DEFAULT_RATE_LIMIT, guardStdin, serveHttp, type RateLimit, type TaskStore } from 'mcp-tasks';
import { fixtureEvents, startClock } from './fixtureEventTools.js';
import { fixturePolicies } from './fixturePolicies.js';
import { createFixtureServer } from './fixtureTools.js';
import { withToolEvents } from './withToolEvents.js';

const env = (name: string): number | undefined => (process.env[name] ? Number(process.env[name]) : undefined);
const storeSpec = process.env['MCP_TASKS_STORE'] ?? join(mkdtempSync(join(tmpdir(), 'mcp-tasks-fixture-')), 'tasks.db');
// With events, the store is opened here: the webhook deliveries are built over its outbox before the runtime.
const served = process.env['MCP_TASKS_EVENTS'] === '1' ? await eventsOver(storeSpec) : undefined;
const store = served?.store ?? storeSpec;
const rate = process.env['MCP_TASKS_RATE_LIMIT']?.split(':').map(Number);
const limits = {
  ...(env('MCP_TASKS_MAX_TTL_MS') !== undefined && { maxTtlMs: env('MCP_TASKS_MAX_TTL_MS') as number }),
  ...(env('MCP_TASKS_MAX_ACTIVE') !== undefined && { maxActivePerOwner: env('MCP_TASKS_MAX_ACTIVE') as number }),
  ...(env('MCP_TASKS_MAX_STORED') !== undefined && { maxStoredPerOwner: env('MCP_TASKS_MAX_STORED') as number }),
  ...(env('MCP_TASKS_LIST_PAGE_SIZE') !== undefined && { listPageSize: env('MCP_TASKS_LIST_PAGE_SIZE') as number }),
  ...(env('MCP_TASKS_MAX_ARGUMENTS_BYTES') !== undefined && {
    maxArgumentsBytes: env('MCP_TASKS_MAX_ARGUMENTS_BYTES') as number,
  }),
  ...(env('MCP_TASKS_MAX_RESULT_BYTES') !== undefined && {
    maxResultBytes: env('MCP_TASKS_MAX_RESULT_BYTES') as number,
  }),
};
// MCP_TASKS_EXECUTOR=queue: tasks run in fixture workers (`npm run worker:conformance`) through BullMQ on REDIS_URL.
const queued = process.env['MCP_TASKS_EXECUTOR'] === 'queue';
if (queued && !process.env['REDIS_URL']) throw new Error('MCP_TASKS_EXECUTOR=queue needs REDIS_URL');
const toolEvents = process.env['MCP_TASKS_TOOL_EVENTS'];
const tasks = await createMcpTasks({
  server: toolEvents ? withToolEvents(toolEvents) : createFixtureServer,
  tools: fixturePolicies(process.env['MCP_TASKS_TOOL_CONCURRENCY']),
  store,
  bindToSession: process.env['MCP_TASKS_BIND_TO_SESSION'] === '1',
  sep1686Requests: ['resources/read', 'prompts/get'],
  limits,
  ...(served && { events: served.events }),
  rateLimit: {
    ...(rate ? rateLimitOf(rate) : DEFAULT_RATE_LIMIT),
    // The fixture's test suites poll in tight loops; MCP_TASKS_POLL_BURST restores the runtime's check (default 5).
    pollBurst: env('MCP_TASKS_POLL_BURST') ?? 1_000_000_000,
  },
  heldCalls: {
    ...(env('MCP_TASKS_HELD_MAX') !== undefined && { maxHeld: env('MCP_TASKS_HELD_MAX') as number }),
    ...(env('MCP_TASKS_HELD_MS') !== undefined && { holdMs: env('MCP_TASKS_HELD_MS') as number }),
  },
  engine: {
    ...(env('MCP_TASKS_LEASE_MS') !== undefined && { leaseMs: env('MCP_TASKS_LEASE_MS') as number }),
    ...(env('MCP_TASKS_WAKE_INTERVAL_MS') !== undefined && {
      wakeIntervalMs: env('MCP_TASKS_WAKE_INTERVAL_MS') as number,
    }),
  },
  // Loaded only for a queue: BullMQ's modules would add about a second to every start-up (and to crash recovery).
  ...(queued && {
    executor: (await import('mcp-tasks/worker')).queueExecutor({
      redisUrl: process.env['REDIS_URL'] as string,
      queueName: process.env['MCP_TASKS_QUEUE'],
    }),
  }),
});

served?.webhooks?.start();
// The fixture's untasked clock type ticks while the process runs.
const stopClock = served ? startClock(tasks) : undefined;
const shutdown = async () => {
  stopClock?.();
  await served?.webhooks?.stop().catch(() => {});
  await tasks.close().catch(() => {});
  process.exit(0);
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

if (process.argv.includes('--stdio')) {
  await tasks
    .attach(createFixtureServer())
    .connect(new StdioServerTransport(guardStdin(process.stdin, process.stdout), process.stdout));
} else {
  const tokens = parseTokens(process.env['MCP_TASKS_TEST_TOKENS']);
  const handle = await serveHttp(tasks, {
    // Sessions answer with the plain fixture; with MCP_TASKS_TOOL_EVENTS only task runs are recorded.
    server: createFixtureServer,
    port: Number(process.env['PORT'] ?? 3001),
    host: '127.0.0.1',
    ...(tokens && {
      authenticate: (request: Request) => {
        const token = request.headers.get('authorization')?.replace(/^Bearer /i, '');
        const clientId = token === undefined ? undefined : tokens.get(token);
        return clientId ? { token: token as string, clientId, scopes: [] } : undefined;
      },
    }),
  });
  console.error(`mcp-tasks fixture server listening on ${handle.url}`);
}

/** MCP_TASKS_RATE_LIMIT: `operations/s:burst[:creations/s:burst[:waits/s:burst]]`. */
function rateLimitOf([perSecond, burst, ...rest]: number[]): RateLimit {
  const shape = (at: number) =>
    rest[at] === undefined ? undefined : { perSecond: rest[at] as number, burst: rest[at + 1] as number };
  const creations = shape(0);
  const waits = shape(2);
  return {
    perSecond: perSecond as number,
    burst: burst as number,
    ...(creations && { creations }),
    ...(waits && { waits }),
  };
}

/** `token:client,token:client` — static bearer tokens for tests of owner scoping. */
function parseTokens(spec: string | undefined): Map<string, string> | undefined {
  if (!spec) return undefined;
  return new Map(spec.split(',').map((pair) => pair.split(':') as [string, string]));
}

/** The fixture's events over the store `spec` names: a memory or SQLite store opened here, with webhook delivery. */
async function eventsOver(spec: string) {
  if (/^(postgres|postgresql|redis|rediss):\/\//.test(spec)) {
    return { store: undefined, ...(await fixtureEvents(undefined)) }; // opened by the runtime: no webhook delivery
  }
  const opened: TaskStore =
    spec === 'memory'
      ? new (await import('mcp-tasks/stores/memory')).MemoryStore()
      : new (await import('mcp-tasks/stores/sqlite')).SqliteStore({ path: spec });
  return { store: opened, ...(await fixtureEvents(opened)) };
}
