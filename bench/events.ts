// npm run bench:events — the Events extension end to end, with real server processes (bench/servers/eventsServer.ts)
// and this process as the requestor on the 2026-07-28 wire:
//  1. push latency, emit → `notifications/events/event` received here: one process (it runs the task, emits, and serves
//     the stream; memory store, then SQLite), then two instances sharing Redis and sharing PostgreSQL (the task runs and emits in
//     one, the stream is served by the other, woken through the store's pub/sub). Each event carries the time it was
//     emitted; the processes share the machine's clock. Events are paced (one every BENCH_EVENTS_INTERVAL_MS).
//  2. events/s of one stream: one task emitting as fast as the store takes it, one stream reading (each instance
//     pair too);
//  3. webhook first attempt: emit → the host's endpoint has the request (a server with webhook delivery from its
//     SQLite outbox), and publish → host for the outbox alone (bench/webhookOutboxBench.ts, as bench:webhooks);
//  4. RSS growth of a server process holding 10,000 concurrent push streams (one per task), after a full collection,
//     with the JS heap a stream takes beside what any plain request held open as long takes;
//  5. kill -9 of the delivering process mid-delivery: events lost, duplicates (bench/webhookOutboxBench.ts).
// `--only push|webhooks|subscriptions|crash` runs one part (1 and 2 are `push`, 3 `webhooks`, 4 `subscriptions`, 5
// `crash`). BENCH_EVENTS_SNAPSHOT=<dir> makes part 4's server write a heap snapshot before and after its streams opened
// (compare them with bench/heapSnapshotDiff.ts).
// Redis and PostgreSQL come from MCP_TASKS_BENCH_REDIS_URL / MCP_TASKS_BENCH_POSTGRES_URL, else the test services'
// MCP_TASKS_TEST_*_URL (eval "$(scripts/services.sh start)"); each run uses a key prefix / schema of its own.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { openEventStream, rpc, type EventStream } from './eventsWire.js';
import { listeningUrl } from './listeningUrl.js';
import { fmt, percentile } from './measure.js';
import { postgresBackend, redisBackend, type Backend } from './queueBench.js';
import { WebhookOutboxBench } from './webhookOutboxBench.js';
import { preciseNow, type WebhookReceiver } from './webhookReceiver.js';

const SERVER = fileURLToPath(new URL('./servers/eventsServer.js', import.meta.url));
const TICK = 'com.example.bench.tick';
const WARMUP = 20;
const ROUNDS = Number(process.env['BENCH_EVENTS_ROUNDS'] ?? 300);
const INTERVAL_MS = Number(process.env['BENCH_EVENTS_INTERVAL_MS'] ?? 20);
const BURST = Number(process.env['BENCH_EVENTS_BURST'] ?? 2000);
const SUBSCRIPTIONS = Number(process.env['BENCH_EVENTS_SUBSCRIPTIONS'] ?? 10_000);
const HELD_CALLS = Number(process.env['BENCH_EVENTS_HELD_CALLS'] ?? 2000);
const CRASH_EVENTS = Number(process.env['BENCH_WEBHOOK_CRASH_EVENTS'] ?? 300);
/** Streams opened at once while the subscriptions are set up (the rest wait for one to be active). */
const OPENING = 200;
const SNAPSHOT_DIR = process.env['BENCH_EVENTS_SNAPSHOT'];
const PARTS = ['push', 'webhooks', 'subscriptions', 'crash'] as const;
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt < 0 ? undefined : process.argv[onlyAt + 1];
if (only !== undefined && !PARTS.includes(only as (typeof PARTS)[number]))
  throw new Error(`--only takes one of ${PARTS.join(', ')}`);
const runs = (part: (typeof PARTS)[number]) => only === undefined || only === part;

const redisUrl = process.env['MCP_TASKS_BENCH_REDIS_URL'] ?? process.env['MCP_TASKS_TEST_REDIS_URL'];
const postgresUrl = process.env['MCP_TASKS_BENCH_POSTGRES_URL'] ?? process.env['MCP_TASKS_TEST_POSTGRES_URL'];
const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-events-'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- server processes -------------------------------------------------------------------------------------------
interface Memory {
  rss: number;
  heap: number;
  /** Plain calls the server holds. */
  held: number;
}

interface Server {
  child: ChildProcess;
  url: string;
  /** The process's RSS and JS heap in use after a full collection, in bytes. */
  memory(): Promise<Memory>;
  stop(): Promise<void>;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, ['--expose-gc', SERVER], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await listeningUrl(child);
  let memoryWaiter: ((memory: Memory) => void) | undefined;
  let seen = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    seen = (seen + chunk.toString()).slice(-2000);
    const match = /rss (\d+) heap (\d+).* held (\d+)/.exec(seen);
    if (match) {
      seen = '';
      memoryWaiter?.({ rss: Number(match[1]), heap: Number(match[2]), held: Number(match[3]) });
    }
  });
  return {
    child,
    url,
    memory: () =>
      new Promise<Memory>((resolve) => {
        memoryWaiter = resolve;
        child.kill('SIGUSR2');
      }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const storeEnv = (backend: Backend) => ({
  BENCH_STORE: backend.kind,
  BENCH_STORE_URL: backend.url,
  BENCH_SCOPE: backend.scope,
});

interface Source {
  name: string;
  input: Record<string, unknown>;
  initialCursor: string;
}

/** Starts a task of `tool` on `url`; its event source. */
async function startTask(url: string, tool: string, args: Record<string, unknown>): Promise<Source> {
  const created = await rpc(url, 'tools/call', { name: tool, arguments: args });
  const source = created['eventSource'] as Source | undefined;
  if (created['resultType'] !== 'task' || !source) throw new Error(`no task event source: ${JSON.stringify(created)}`);
  return source;
}

async function settle<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface Tick {
  n: number;
  at: number;
}

// ---- 1, 2: push ---------------------------------------------------------------------------------------------------
/** Emit → notification received, paced events of one task emitted on `emitUrl`, streamed from `streamUrl`. */
async function pushLatency(emitUrl: string, streamUrl: string): Promise<number[]> {
  const total = WARMUP + ROUNDS;
  const startAt = Date.now() + 1500;
  const source = await startTask(emitUrl, 'emit_paced', { count: total, intervalMs: INTERVAL_MS, startAt });
  const sample: number[] = [];
  let last: () => void = () => {};
  const all = new Promise<void>((resolve) => (last = resolve));
  const stream = openEventStream(streamUrl, source, (params) => {
    const tick = params['data'] as Tick;
    if (tick.n >= WARMUP) sample.push(preciseNow() - tick.at);
    if (tick.n === total - 1) last();
  });
  await settle(stream.active, 10_000, 'the stream to be active');
  if (Date.now() >= startAt) throw new Error('the stream was active only after the first emit: raise the lead time');
  await settle(all, 30_000 + total * INTERVAL_MS * 3, 'every paced event');
  await settle(stream.done, 10_000, 'the stream to end with its task');
  return sample;
}

interface Throughput {
  emittedPerSecond: number;
  deliveredPerSecond: number;
}

/** One task emitting BURST events as fast as it can on `emitUrl`, one stream reading them from `streamUrl`. */
async function streamThroughput(emitUrl: string, streamUrl: string): Promise<Throughput> {
  const startAt = Date.now() + 1500;
  const source = await startTask(emitUrl, 'emit_burst', { count: BURST, startAt });
  let first: Tick | undefined;
  let lastTick: Tick | undefined;
  let lastArrival = 0;
  let received = 0;
  let end: () => void = () => {};
  const all = new Promise<void>((resolve) => (end = resolve));
  const stream = openEventStream(streamUrl, source, (params) => {
    const tick = params['data'] as Tick;
    first ??= tick;
    lastTick = tick;
    lastArrival = preciseNow();
    if (++received === BURST) end();
  });
  await settle(stream.active, 10_000, 'the stream to be active');
  await settle(all, 120_000, 'every burst event');
  await settle(stream.done, 10_000, 'the stream to end with its task');
  const from = first as Tick;
  const to = lastTick as Tick;
  return {
    emittedPerSecond: ((BURST - 1) / (to.at - from.at)) * 1000,
    deliveredPerSecond: (BURST / (lastArrival - from.at)) * 1000,
  };
}

// ---- 3: webhook through a server ----------------------------------------------------------------------------------
/** Emit → the host has the request: paced events of a task whose events are subscribed to by webhook. */
async function webhookLatency(receiver: WebhookReceiver): Promise<number[]> {
  const server = await startServer({
    BENCH_STORE: 'sqlite',
    BENCH_STORE_URL: join(dir, 'webhooks.db'),
    BENCH_WEBHOOK_ORIGIN: receiver.origin,
  });
  try {
    const total = WARMUP + ROUNDS;
    const startAt = Date.now() + 2000;
    const source = await startTask(server.url, 'emit_paced', { count: total, intervalMs: INTERVAL_MS, startAt });
    receiver.hits.length = 0;
    await rpc(server.url, 'events/subscribe', {
      name: source.name,
      arguments: source.input,
      delivery: { mode: 'webhook', url: `${receiver.origin}/hooks`, secret: receiver.newSecret() },
      cursor: source.initialCursor,
    });
    if (Date.now() >= startAt) throw new Error('subscribed only after the first emit: raise the lead time');
    const ticks = () => receiver.hits.filter((hit) => hit.payload['name'] === TICK);
    const deadline = Date.now() + 30_000 + total * INTERVAL_MS * 3;
    while (ticks().length < total && Date.now() < deadline) await sleep(20);
    return ticks()
      .filter((hit) => (hit.payload['data'] as Tick).n >= WARMUP)
      .map((hit) => hit.at - (hit.payload['data'] as Tick).at);
  } finally {
    await server.stop();
  }
}

// ---- 4: concurrent push subscriptions ---------------------------------------------------------------------------
interface Subscriptions {
  before: Memory;
  after: Memory;
  openMs: number;
}

/** RSS of a fresh server before and after SUBSCRIPTIONS streams, one per task, are open (after a full collection). */
async function subscriptionMemory(): Promise<Subscriptions> {
  const server = await startServer({
    BENCH_STORE: 'sqlite',
    BENCH_STORE_URL: join(dir, 'subscriptions.db'),
    BENCH_MAX_STREAMS_PER_OWNER: String(SUBSCRIPTIONS),
    ...(SNAPSHOT_DIR && { BENCH_SNAPSHOT_DIR: SNAPSHOT_DIR }),
  });
  const streams: EventStream[] = [];
  try {
    const sources: Source[] = [];
    for (let i = 0; i < SUBSCRIPTIONS; i += 100) {
      const batch = Math.min(100, SUBSCRIPTIONS - i);
      sources.push(
        ...(await Promise.all(Array.from({ length: batch }, () => startTask(server.url, 'hold', { ms: 600_000 })))),
      );
    }
    // One stream opened and closed first, so what the first stream loads (code, caches) is in the baseline.
    const probe = openEventStream(server.url, sources[0] as Source, () => {});
    await probe.active;
    probe.close();
    await sleep(1000);
    const before = await server.memory();
    const started = performance.now();
    let next = 0;
    const opener = async () => {
      while (next < sources.length) {
        const stream = openEventStream(server.url, sources[next++] as Source, () => {});
        streams.push(stream);
        await settle(stream.active, 30_000, 'a stream to be active');
      }
    };
    await Promise.all(Array.from({ length: OPENING }, opener));
    const openMs = performance.now() - started;
    await sleep(2000);
    const after = await server.memory();
    return { before, after, openMs };
  } finally {
    for (const stream of streams) stream.close();
    // Ten thousand streams and running tasks need not end gracefully: the file is removed with the directory.
    server.child.kill('SIGKILL');
  }
}

/**
 * The JS heap a held request costs on the 2026-07-28 wire whatever it is, for comparison: `count` plain `tools/call`s
 * of a tool that answers after ten minutes, all in progress. Bytes a request.
 */
async function heldCallHeap(count: number): Promise<number> {
  const server = await startServer({ BENCH_STORE: 'sqlite', BENCH_STORE_URL: join(dir, 'held.db') });
  try {
    await rpc(server.url, 'tools/call', { name: 'sleep_plain', arguments: { ms: 1 } });
    await sleep(1000);
    const before = await server.memory();
    for (let i = 0; i < count; i++)
      rpc(server.url, 'tools/call', { name: 'sleep_plain', arguments: { ms: 600_000 } }).catch(() => {});
    const deadline = Date.now() + 120_000;
    while ((await server.memory()).held < count && Date.now() < deadline) await sleep(500);
    await sleep(1000);
    const after = await server.memory();
    if (after.held < count) throw new Error(`only ${after.held} of ${count} plain calls were held`);
    return (after.heap - before.heap) / count;
  } finally {
    server.child.kill('SIGKILL');
  }
}

// ---- report ------------------------------------------------------------------------------------------------------
interface Row {
  what: string;
  figure: string;
  goal: string;
  met?: boolean;
}
const rows: Row[] = [];
function report(row: Row): void {
  rows.push(row);
  const verdict = row.met === undefined ? '' : row.met ? '   met' : '   NOT MET';
  console.log(`${row.what.padEnd(58)} ${row.figure.padEnd(34)} ${row.goal}${verdict}`);
}
const latencyFigure = (sample: number[]) =>
  `p50 ${fmt(percentile(sample, 50), 1)} ms, p99 ${fmt(percentile(sample, 99), 1)} ms (n=${sample.length})`;
const throughputFigure = (t: Throughput) =>
  `${fmt(t.deliveredPerSecond)} events/s (emitted ${fmt(t.emittedPerSecond)}/s)`;

console.log(
  `bench:events — ${ROUNDS} paced events (one every ${INTERVAL_MS} ms, after ${WARMUP} of warm-up) per latency row, ` +
    `${fmt(BURST)} events per throughput row, ${fmt(SUBSCRIPTIONS)} push streams (Node ${process.version}, load average ` +
    `${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores)`,
);
console.log(
  `the bench server raises the documented limits it needs: events.maxStreamsPerOwner ${fmt(SUBSCRIPTIONS)} ` +
    `(default 100; events.maxStreams stays at its default 10,000), limits.eventsPerTask, maxActivePerOwner and ` +
    `maxStoredPerOwner 1,000,000, no rate limit\n`,
);
const outbox = await WebhookOutboxBench.start();
try {
  // The memory store shows what the events layer itself costs; SQLite adds the durable append (a WAL flush) to each emit.
  for (const [name, env] of runs('push')
    ? ([
        ['memory', { BENCH_STORE: 'memory' }],
        ['SQLite', { BENCH_STORE: 'sqlite', BENCH_STORE_URL: join(dir, 'one.db') }],
      ] as const)
    : []) {
    const server = await startServer(env);
    try {
      const sample = await pushLatency(server.url, server.url);
      report({
        what: `push emit → notification, one process (${name})`,
        figure: latencyFigure(sample),
        goal: 'p50 ≤ 10 ms',
        met: percentile(sample, 50) <= 10,
      });
      report({
        what: `events/s of one stream, one process (${name})`,
        figure: throughputFigure(await streamThroughput(server.url, server.url)),
        goal: '—',
      });
    } finally {
      await server.stop();
    }
  }
  const backends: Array<[string, () => Promise<Backend>]> = [];
  if (runs('push')) {
    if (redisUrl) backends.push(['Redis', () => redisBackend(redisUrl)]);
    else console.log('MCP_TASKS_TEST_REDIS_URL is not set: no Redis rows');
    if (postgresUrl) backends.push(['PostgreSQL', () => postgresBackend(postgresUrl)]);
    else console.log('MCP_TASKS_TEST_POSTGRES_URL is not set: no PostgreSQL rows');
  }
  for (const [name, open] of backends) {
    const backend = await open();
    const emitting = await startServer(storeEnv(backend));
    const pushing = await startServer(storeEnv(backend));
    try {
      const sample = await pushLatency(emitting.url, pushing.url);
      report({
        what: `push emit → notification, two instances sharing ${name}`,
        figure: latencyFigure(sample),
        goal: 'p50 ≤ 50 ms',
        met: percentile(sample, 50) <= 50,
      });
      report({
        what: `events/s of one stream, two instances sharing ${name}`,
        figure: throughputFigure(await streamThroughput(emitting.url, pushing.url)),
        goal: '—',
      });
    } finally {
      await pushing.stop();
      await emitting.stop();
      await backend.dispose();
    }
  }
  if (runs('webhooks')) {
    const sample = await webhookLatency(outbox.receiver);
    report({
      what: 'webhook first attempt, emit → host (server, SQLite outbox)',
      figure: latencyFigure(sample),
      goal: 'p50 ≤ 50 ms',
      met: sample.length === ROUNDS && percentile(sample, 50) <= 50,
    });
    const alone = await outbox.latencySameProcess(ROUNDS);
    report({
      what: 'webhook first attempt, publish → host (outbox alone)',
      figure: latencyFigure(alone),
      goal: 'p50 ≤ 50 ms',
      met: percentile(alone, 50) <= 50,
    });
  }
  if (runs('subscriptions')) {
    const { before, after, openMs } = await subscriptionMemory();
    const growth = (after.rss - before.rss) / 1024 / 1024;
    report({
      what: `RSS growth, ${fmt(SUBSCRIPTIONS)} concurrent push streams (SQLite)`,
      figure: `${fmt(growth, 1)} MB (${fmt((after.rss - before.rss) / SUBSCRIPTIONS / 1024, 1)} KB a stream)`,
      goal: '≤ 150 MB',
      met: growth <= 150,
    });
    const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 1);
    // BENCH_EVENTS_HELD_CALLS=0 skips the comparison.
    const plain = HELD_CALLS > 0 ? await heldCallHeap(HELD_CALLS) : undefined;
    console.log(
      `    RSS ${mb(before.rss)} → ${mb(after.rss)} MB, JS heap in use ${mb(before.heap)} → ${mb(after.heap)} MB ` +
        `(${fmt((after.heap - before.heap) / SUBSCRIPTIONS / 1024, 1)} KB a stream); all open in ${fmt(openMs / 1000, 1)} s`,
    );
    if (plain !== undefined)
      console.log(
        `    for comparison, a plain tools/call held open (${fmt(HELD_CALLS)} at once): ${fmt(plain / 1024, 1)} KB of JS heap ` +
          `a request (the 2026 wire builds a server instance for each request, held for its life)`,
      );
  }
  if (runs('crash')) {
    const crash = await outbox.killDuringDelivery(CRASH_EVENTS);
    report({
      what: 'webhook kill -9 mid-delivery: events lost',
      figure: `${crash.lost} of ${crash.events}`,
      goal: '0',
      met: crash.lost === 0,
    });
    report({
      what: 'webhook kill -9 mid-delivery: duplicates',
      figure: `${crash.duplicates} (${crash.held} held by the killed process)`,
      goal: 'repeats of a webhook-id only',
      met: crash.foreign === 0,
    });
  }
} finally {
  outbox.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `load average at the end: ${loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')} (${availableParallelism()} cores)`,
);
if (rows.some((row) => row.met === false)) process.exitCode = 1;
