// npm run bench:compare — in one run, under load from autocannon (32 connections): ping/s, tasks/get/s and task
// lifecycles/s (task-augmented tools/call of a 0 ms tool → tasks/result) with p99 for a bare Node http handler (the
// machine's limit), an equivalent server on SDK 1.32's experimental tasks (in-memory) and mcp-tasks on memory and on
// SQLite (durability full: every acknowledged write on disk), each with the server's CPU and the bytes it allocated and
// promoted to V8's old generation per operation (`--trace-gc-nvp`); the ratios the performance goals use; the
// server's RSS per 10k finished and per 10k suspended tasks (workflows parked in a durable sleep); and store
// get/list-page throughput with COMPARE_LARGE tasks stored in SQLite against 1k (bench:store has the 1M figure).
// COMPARE_STEPS (default load,rss,store) picks the parts. COMPARE_SECONDS (default 5) is the length of each load run,
// after COMPARE_WARMUP seconds (default 3) of the same load that is not measured (the first seconds of a code path run
// unoptimised, at up to twice its CPU); COMPARE_RSS_TASKS (default 10000) the tasks the RSS figures are measured over;
// COMPARE_LARGE (default 100000; 1000000 for the goal's figure, which takes minutes to fill) the number of tasks of the
// large store.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';

import type { TaskRecord } from '../src/engine/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { benchRecord } from './benchRecord.js';
import { GcTrace } from './gcTrace.js';
import { HttpSession } from './httpSession.js';
import { lifecycleLoad, requestLoad, type LoadOptions, type LoadResult } from './loadGenerator.js';
import { fmt, medianOpsPerSecond } from './measure.js';
import { processCpuMs } from './processCpu.js';

const CONNECTIONS = 32;
const SECONDS = Number(process.env['COMPARE_SECONDS'] ?? 5);
const WARMUP = Number(process.env['COMPARE_WARMUP'] ?? 3);
const LARGE = Number(process.env['COMPARE_LARGE'] ?? 100_000);
const RSS_TASKS = Number(process.env['COMPARE_RSS_TASKS'] ?? 10_000);

const load = () =>
  `load ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`;

interface Server {
  child: ChildProcess;
  url: string;
  stderr: string[];
  /** The collector's work, for servers started with `--trace-gc-nvp`. */
  gc: GcTrace;
}

async function start(script: string, env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<Server> {
  const child = spawn(process.execPath, [...nodeFlags, fileURLToPath(new URL(script, import.meta.url))], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(...chunk.toString().split('\n')));
  const gc = new GcTrace(child.stdout as NonNullable<typeof child.stdout>);
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const match = /listening on (\S+)/.exec(chunk.toString());
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}: ${stderr.join('\n')}`)));
  });
  return { child, url, stderr, gc };
}

async function stop(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

async function openSessions(url: string, count: number, capabilities?: Record<string, unknown>) {
  const sessions: HttpSession[] = [];
  for (let i = 0; i < count; i++) {
    const session = new HttpSession(url);
    await session.initialize(capabilities);
    sessions.push(session);
  }
  return sessions;
}

async function finishedTask(session: HttpSession): Promise<string> {
  const created = await session.request('tools/call', { name: 'complete_at', arguments: { at: 0 }, task: {} });
  const taskId = (created['task'] as { taskId: string }).taskId;
  await session.request('tasks/result', { taskId });
  return taskId;
}

interface Measured extends LoadResult {
  /** Server CPU per unit (request or lifecycle), in µs. */
  cpuUs: number;
  /** Bytes the server promoted to V8's old generation per unit: what it kept beyond the unit's own life. */
  promotedBytes: number;
  /** Bytes the server allocated per unit. */
  allocatedBytes: number;
}

/** Runs the load for `WARMUP` seconds unmeasured, then for `SECONDS` measured: steady-state figures for every server. */
async function withCpu(
  server: Server,
  options: LoadOptions,
  run: (options: LoadOptions) => Promise<LoadResult>,
): Promise<Measured> {
  if (WARMUP > 0) await run({ ...options, seconds: WARMUP });
  const before = processCpuMs(server.child.pid as number);
  const gcBefore = server.gc.totals();
  const result = await run(options);
  const used = processCpuMs(server.child.pid as number) - before;
  const gcAfter = server.gc.totals();
  const units = Math.max(1, result.perSecond * SECONDS);
  return {
    ...result,
    cpuUs: (used * 1000) / units,
    promotedBytes: (gcAfter.promoted - gcBefore.promoted) / units,
    allocatedBytes: (gcAfter.allocated - gcBefore.allocated) / units,
  };
}

interface Row {
  name: string;
  ping: Measured;
  get?: Measured;
  lifecycle?: Measured;
  load: string;
}

async function measureServer(name: string, script: string, env: Record<string, string> = {}): Promise<Row> {
  // One line per collection on stdout: the bytes each unit allocated and kept, figures the machine's load moves little.
  const server = await start(script, env, ['--trace-gc-nvp']);
  try {
    const tasky = !script.includes('bare');
    const sessions = tasky ? await openSessions(server.url, CONNECTIONS) : [];
    const options: LoadOptions = {
      url: server.url,
      sessions: sessions.map((s) => s.id as string),
      connections: CONNECTIONS,
      seconds: SECONDS,
    };
    const ping = await withCpu(server, options, (o) => requestLoad(o, 'ping'));
    if (!tasky) return { name, ping, load: load() };
    const taskIds = await Promise.all(sessions.map(finishedTask));
    const get = await withCpu(server, options, (o) =>
      requestLoad(o, 'tasks/get', (session) => ({ taskId: taskIds[session] })),
    );
    const lifecycle = await withCpu(server, options, (o) => lifecycleLoad(o, 'complete_at', { at: 0 }));
    return { name, ping, get, lifecycle, load: load() };
  } finally {
    await stop(server);
  }
}

interface MemoryLine {
  rss: number;
  heapUsed: number;
  /** Task runs the server holds: running, or waiting for a slot. */
  runs: number;
}

/** The server's memory after a full collection, and the runs it holds; fails at once if the server has died. */
async function memoryOf(server: Server): Promise<MemoryLine> {
  const seen = server.stderr.length;
  server.child.kill('SIGUSR2');
  for (;;) {
    const line = server.stderr.slice(seen).find((l) => l.startsWith('memory '));
    if (line) return JSON.parse(line.slice(7)) as MemoryLine;
    if (server.child.exitCode !== null || server.child.signalCode !== null)
      throw new Error(`the server died: ${server.stderr.slice(-20).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const MiB = 1024 * 1024;

/** Runs `count` calls of `each` over `sessions`, one at a time per session. */
async function spread(sessions: HttpSession[], count: number, each: (s: HttpSession) => Promise<unknown>) {
  let issued = 0;
  await Promise.all(
    sessions.map(async (session) => {
      while (issued++ < count) await each(session);
    }),
  );
}

/** Polls the server until it holds no task run: every suspended workflow has parked. */
async function parked(server: Server): Promise<MemoryLine> {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const memory = await memoryOf(server);
    if (memory.runs === 0) return memory;
    if (Date.now() > deadline) throw new Error(`${memory.runs} runs still held after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** RSS growth of an mcp-tasks server per 10k finished tasks and per 10k suspended workflows (parked in a step.sleep). */
interface Growth {
  rss: number;
  heap: number;
}

/** Growth per 10k tasks from `from` to `to`, in MiB. */
function growth(from: MemoryLine, to: MemoryLine): Growth {
  const per10k = 10_000 / RSS_TASKS / MiB;
  return { rss: (to.rss - from.rss) * per10k, heap: (to.heapUsed - from.heapUsed) * per10k };
}

async function measureRss(store: string): Promise<{ finished: Growth; suspended: Growth; load: string }> {
  const server = await start('./servers/mcpTasksServer.js', { MCP_TASKS_STORE: store, MCP_TASKS_CONCURRENCY: '64' }, [
    '--expose-gc',
  ]);
  try {
    const sessions = await openSessions(server.url, CONNECTIONS);
    await spread(sessions, 500, finishedTask);
    const before = await memoryOf(server);
    await spread(sessions, RSS_TASKS, finishedTask);
    const afterFinished = await memoryOf(server);
    // An hour's durable sleep: each task runs to its step.sleep, then holds no runner, lease or memory of its own.
    // Created a thousand at a time, each lot parked before the next: a backlog of tasks waiting for a slot would
    // measure the backlog (each holds a lease, renewed with every other), not parked tasks.
    let afterSuspended = afterFinished;
    for (let created = 0; created < RSS_TASKS; created += 1000) {
      await spread(sessions, Math.min(1000, RSS_TASKS - created), (session) =>
        session.request('tools/call', { name: 'nap', arguments: { ms: 3_600_000 }, task: {} }),
      );
      afterSuspended = await parked(server);
    }
    return {
      finished: growth(before, afterFinished),
      suspended: growth(afterFinished, afterSuspended),
      load: load(),
    };
  } finally {
    await stop(server);
  }
}

/** Fills a SQLite file with `size` tasks of 10 owners in large transactions (the filling is not measured). */
async function filledStore(path: string, size: number): Promise<{ store: SqliteStore; ids: string[] }> {
  const init = new SqliteStore({ path });
  await init.init();
  await init.close();
  const db = new Database(path);
  const insert = db.prepare(
    `INSERT INTO mcp_tasks (task_id, owner, status, created_at, expires_at, idempotency_key, runner, lease_until, version, data)
     VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?)`,
  );
  const now = Date.now();
  const ids: string[] = [];
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const r: TaskRecord = benchRecord(i, now, 10);
      ids.push(r.taskId);
      insert.run(r.taskId, r.owner, r.status, r.createdAt, r.expiresAt, r.version, JSON.stringify(r));
    }
  });
  for (let from = 0; from < size; from += 50_000) batch(from, Math.min(size, from + 50_000));
  db.close();
  // The file's figures: the record cache would answer the small store's reads from memory.
  const store = new SqliteStore({ path, recordCacheEntries: 0 });
  await store.init();
  return { store, ids };
}

async function storeFigures(path: string, size: number): Promise<{ get: number; list: number }> {
  const { store, ids } = await filledStore(path, size);
  try {
    const now = Date.now();
    const get = await medianOpsPerSecond(async (i) => {
      await store.get(ids[(i * 104_729) % ids.length] as string);
    });
    const list = await medianOpsPerSecond(async (i) => {
      await store.list(`owner-${i % 10}`, { limit: 50, now });
    });
    return { get, list };
  } finally {
    await store.close();
  }
}

const ratio = (a: number | undefined, b: number | undefined) => fmt((a ?? NaN) / (b ?? NaN), 2);

async function loadTable(dir: string): Promise<void> {
  console.log(
    `bench:compare — autocannon, ${CONNECTIONS} connections, ${SECONDS} s per figure after ${WARMUP} s of the same load unmeasured; lifecycle = tools/call as task (0 ms tool) → tasks/result\n`,
  );
  const rows: Row[] = [];
  for (const [name, script, env] of [
    ['bare Node http handler (the limit)', './servers/bareHttpServer.js', {}],
    ['SDK 1.32 experimental (memory)', './servers/sdkV1TaskServer.js', {}],
    ['mcp-tasks, memory store', './servers/mcpTasksServer.js', { MCP_TASKS_STORE: 'memory' }],
    ['mcp-tasks, SQLite (durable)', './servers/mcpTasksServer.js', { MCP_TASKS_STORE: join(dir, 'bench.db') }],
  ] as const) {
    const row = await measureServer(name, script, env);
    rows.push(row);
    const cell = (r: Measured | undefined, withP99 = false) =>
      r
        ? `${fmt(r.perSecond).padStart(7)} (${withP99 ? `p99 ${fmt(r.p99)} ms, ` : ''}cpu ${fmt(r.cpuUs)} µs)${r.errors ? ` [${r.errors} errors]` : ''}`
        : '—'.padStart(7);
    console.log(
      `${row.name.padEnd(34)} ping/s ${cell(row.ping)}  tasks/get/s ${cell(row.get)}  lifecycles/s ${cell(row.lifecycle, true)}  (${row.load})`,
    );
  }
  const [bare, sdk, memory, sqlite] = rows as [Row, Row, Row, Row];
  console.log('\nratios (goals in brackets):');
  console.log(
    `  tasks/get/s ÷ bare ping/s          memory ${ratio(memory.get?.perSecond, bare.ping.perSecond)}  SQLite ${ratio(sqlite.get?.perSecond, bare.ping.perSecond)}  [≥ 0.5]`,
  );
  console.log(
    `  lifecycles/s ÷ own ping/s          memory ${ratio(memory.lifecycle?.perSecond, memory.ping.perSecond)}  SQLite ${ratio(sqlite.lifecycle?.perSecond, sqlite.ping.perSecond)}  [SQLite ≥ 0.4]`,
  );
  console.log(
    `  lifecycles/s ÷ SDK 1.32            memory ${ratio(memory.lifecycle?.perSecond, sdk.lifecycle?.perSecond)}  SQLite ${ratio(sqlite.lifecycle?.perSecond, sdk.lifecycle?.perSecond)}  [memory ≥ 5, SQLite ≥ 3]`,
  );
  console.log(
    `  lifecycle p99                      memory ${fmt(memory.lifecycle?.p99 ?? NaN)} ms  SQLite ${fmt(sqlite.lifecycle?.p99 ?? NaN)} ms  [≤ 50 ms]`,
  );
  console.log(
    `  SQLite ÷ memory (durability's cost) tasks/get/s ${ratio(sqlite.get?.perSecond, memory.get?.perSecond)}  lifecycles/s ${ratio(sqlite.lifecycle?.perSecond, memory.lifecycle?.perSecond)}  (one run's rows: the machine's speed cancels out)`,
  );
  console.log(
    `  ping/s ÷ bare ping/s               SDK ${ratio(sdk.ping.perSecond, bare.ping.perSecond)}  memory ${ratio(memory.ping.perSecond, bare.ping.perSecond)}  SQLite ${ratio(sqlite.ping.perSecond, bare.ping.perSecond)}`,
  );

  const kb = (m: Measured | undefined) => fmt((m?.promotedBytes ?? NaN) / 1024, 2);
  const allocatedKb = (m: Measured | undefined) => fmt((m?.allocatedBytes ?? NaN) / 1024, 1);
  console.log(
    `  KiB promoted per op (allocated)    ping bare ${kb(bare.ping)} (${allocatedKb(bare.ping)})  memory ${kb(memory.ping)} (${allocatedKb(memory.ping)}); tasks/get memory ${kb(memory.get)} (${allocatedKb(memory.get)})  SQLite ${kb(sqlite.get)} (${allocatedKb(sqlite.get)})  SDK ${kb(sdk.get)} (${allocatedKb(sdk.get)}); lifecycle memory ${kb(memory.lifecycle)} (${allocatedKb(memory.lifecycle)})  SQLite ${kb(sqlite.lifecycle)} (${allocatedKb(sqlite.lifecycle)})  (kept past the op's own life: the GC's work, steady from run to run)`,
  );
  console.log(
    `  cpu µs per op ÷ bare ping          tasks/get memory ${ratio(memory.get?.cpuUs, bare.ping.cpuUs)}  SDK ${ratio(sdk.get?.cpuUs, bare.ping.cpuUs)}; lifecycle memory ${ratio(memory.lifecycle?.cpuUs, bare.ping.cpuUs)}  SQLite ${ratio(sqlite.lifecycle?.cpuUs, bare.ping.cpuUs)}  SDK ${ratio(sdk.lifecycle?.cpuUs, bare.ping.cpuUs)}  (server CPU per op: what the load on the machine moves least)`,
  );
}

async function rssTable(dir: string): Promise<void> {
  console.log(
    `\nserver RSS growth per 10,000 tasks, JS heap in use in brackets (after a full GC; measured over ${fmt(RSS_TASKS)}):`,
  );
  for (const [name, store] of [
    ['memory store', 'memory'],
    ['SQLite store', join(dir, 'rss.db')],
  ] as const) {
    const rss = await measureRss(store);
    console.log(
      `  ${name.padEnd(14)} finished ${fmt(rss.finished.rss, 1)} MiB (heap ${fmt(rss.finished.heap, 1)})   suspended (parked workflow) ${fmt(rss.suspended.rss, 1)} MiB (heap ${fmt(rss.suspended.heap, 1)})  (${rss.load})`,
    );
  }
}

async function storeTable(dir: string): Promise<void> {
  const small = await storeFigures(join(dir, 'small.db'), 1000);
  const large = await storeFigures(join(dir, 'large.db'), LARGE);
  console.log(
    `\nSQLite store, ops/s with 1k and ${fmt(LARGE)} tasks stored (10 owners, first list page of 50):  (${load()})`,
  );
  console.log(`  1k     get ${fmt(small.get).padStart(8)}   list page ${fmt(small.list).padStart(7)}`);
  console.log(
    `  ${`${fmt(LARGE / 1000)}k`.padEnd(6)} get ${fmt(large.get).padStart(8)}   list page ${fmt(large.list).padStart(7)}`,
  );
  console.log(
    `  ratio  get ${ratio(large.get, small.get)}   list page ${ratio(large.list, small.list)}  [≥ 0.8 at 1M; COMPARE_LARGE=1000000]`,
  );
}

const STEPS = (process.env['COMPARE_STEPS'] ?? 'load,rss,store').split(',');
const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-compare-'));
try {
  if (STEPS.includes('load')) await loadTable(dir);
  if (STEPS.includes('rss')) await rssTable(dir);
  if (STEPS.includes('store')) await storeTable(dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
