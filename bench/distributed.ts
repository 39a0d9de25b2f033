// npm run bench:distributed — end-to-end task throughput (saturated) and pickup delay at steady load: the SQLite single-process
// baseline (in-process executor), then PostgreSQL and Redis stores with the BullMQ queue and one and two worker
// processes. Needs MCP_TASKS_TEST_REDIS_URL (queue and Redis store) and MCP_TASKS_TEST_POSTGRES_URL:
//   eval "$(scripts/services.sh start)"; npm run bench:distributed; scripts/services.sh stop
// Each task is the fixture tool slow_compute {seconds: 0} run as an internal MCP call on a fresh server instance.
// Wake: from a task's terminal write (terminalAt, written by the worker) to the requestor's waiter waking, at the steady
// rate: the cross-process wake a waiting tasks/result relies on (1 ms resolution, one machine's clock).
// Pickup delay: from the task's creation (createdAt) to its claim by the worker that runs it (startedAt), or, in process,
// to the work's start (a task the in-process executor has a slot for is claimed by its own insert), 1 ms resolution.
// CPU a task: what every process involved used during the saturated run (this requestor, the workers, Redis, the
// PostgreSQL backends; read from /proc), divided by the tasks completed. The ceiling is the cores' time divided by
// that: no configuration runs more tasks a second on this machine, whatever its round trips. It assumes the work
// spreads over every core, which one process's JavaScript does not (the in-process row is bound by its main thread).
// Raw BullMQ: the same workers count, concurrency, in-flight and Redis moving empty jobs (rawBullmq.ts); each queue
// row's tasks/s is printed as a ratio of the raw row with as many workers, with the Redis commands a task
// (INFO commandstats, every client) and, on PostgreSQL, the statements a task (pg_stat_statements, listed by statement:
// pgStatements.ts) beside the raw queue's commands a job, and each kind of Redis command a task (the commands Lua
// scripts run count by their own kind, the script call itself as evalsha).
// BENCH_ONLY=redis|postgres measures the queue rows of that store only (no SQLite baseline); BENCH_RAW=0 skips the raw
// BullMQ rows (no ratios then); BENCH_WORKERS=1 measures one worker count: for quick comparisons while changing one
// store. BENCH_NODE_ARGS passes node options to the worker processes (e.g. --cpu-prof).
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';

import { TaskEngine, type TaskWork } from '../src/engine/index.js';
import { InProcessExecutor, QueueExecutor } from '../src/executors/index.js';
import { createTaskWork } from '../src/server/index.js';
import { SqliteStore } from '../src/stores/index.js';
import { createFixtureServer } from '../examples/conformance/fixtureTools.js';
import { internalCallCpu } from './internalCall.js';
import { fmt, percentile } from './measure.js';
import { cpuOf, processesNamed } from './processCpu.js';
import { postgresCounts, type PostgresCounts } from './pgStatements.js';
import { rawBullmq, type RawFigures } from './rawBullmq.js';
import { deleteKeys, postgresBackend, redisBackend, startWorker, stopWorker, type Backend } from './queueBench.js';

/** Saturation: tasks kept in flight (below the executors' concurrency, so none waits for a slot). */
const IN_FLIGHT = 24;
const CONCURRENCY = 32;
/** Steady load: tasks started per second, open loop, below every configuration's capacity. */
const STEADY_RATE = Number(process.env['BENCH_STEADY_RATE'] ?? 50);
const WARMUP_MS = 1500;
/** BENCH_WORKERS=1 (or 2) measures the queue rows with that many workers only. */
const WORKER_COUNTS = (process.env['BENCH_WORKERS'] ?? '1,2').split(',').map(Number);
const MEASURE_MS = Number(process.env['BENCH_MEASURE_MS'] ?? 6000);

interface Figures {
  label: string;
  workers: string;
  /** Completed tasks per second at saturation. */
  tasksPerSecond: number;
  /** At the steady rate: creation to claim, and request to observed end, in ms. */
  pickup: number[];
  endToEnd: number[];
  wake: number[];
  /** CPU per completed task at saturation, in ms, by process group. */
  cpu: Record<string, number>;
  /** Per completed task at saturation: Redis commands, PostgreSQL statements (where the row uses them). */
  counts: Record<string, number>;
  /** The same by kind: Redis commands by command, PostgreSQL statements by statement. */
  kinds: Record<string, Record<string, number>>;
  /** What the PostgreSQL count is: statements (pg_stat_statements) or, without it, transactions. */
  postgresSource?: PostgresCounts['source'];
}

/** Server-side counters read before and after the saturated run: running totals by kind. */
type Counters = Record<string, () => Promise<Map<string, number>>>;

/** The process groups whose CPU a configuration counts, each by the ids of its processes. */
type Processes = Record<string, () => number[]>;

interface Sample {
  pickup: number;
  endToEnd: number;
  /** From the terminal write (terminalAt, by the process that ran the task) to this process's waiter waking. */
  wake: number;
}

/** When the in-process work of each task began. */
const workStarted = new Map<string, number>();

/** One task from the requestor's side: create, wait for the end. */
async function oneTask(engine: TaskEngine): Promise<Sample> {
  const asked = Date.now();
  const { task } = await engine.create({
    owner: 'bench',
    dialect: 'bench',
    request: { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 } } },
    retention: { kind: 'ttl', ttlMs: 3_600_000 },
  });
  const done = await engine.waitForTerminal(task.taskId);
  if (done?.status !== 'completed')
    throw new Error(`task ${task.taskId} ended ${done?.status}: ${done?.statusMessage}`);
  const started = workStarted.get(task.taskId) ?? (done.startedAt as number);
  workStarted.delete(task.taskId);
  const now = Date.now();
  return { pickup: started - done.createdAt, endToEnd: now - asked, wake: now - (done.terminalAt ?? now) };
}

/** Closed loop: keeps IN_FLIGHT tasks going for `ms`; returns the tasks completed and the seconds it took. */
async function saturate(engine: TaskEngine, ms: number): Promise<{ count: number; seconds: number }> {
  let count = 0;
  let stop = false;
  const start = performance.now();
  const timer = setTimeout(() => (stop = true), ms);
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (!stop) {
        await oneTask(engine);
        count++;
      }
    }),
  );
  clearTimeout(timer);
  return { count, seconds: (performance.now() - start) / 1000 };
}

/** Open loop: starts STEADY_RATE tasks per second for `ms`, whatever is still running. */
async function steady(engine: TaskEngine, ms: number): Promise<Sample[]> {
  const running: Array<Promise<Sample>> = [];
  const start = performance.now();
  for (let i = 0; ; i++) {
    const due = start + (i * 1000) / STEADY_RATE;
    if (due - start >= ms) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    running.push(oneTask(engine));
  }
  return Promise.all(running);
}

async function readAll(counters: Counters): Promise<Record<string, Map<string, number>>> {
  const values: Record<string, Map<string, number>> = {};
  for (const [name, read] of Object.entries(counters)) values[name] = await read();
  return values;
}

/** Each kind's growth between two readings, per task. */
function perTask(before: Map<string, number>, after: Map<string, number>, count: number): Record<string, number> {
  return Object.fromEntries([...after].map(([kind, total]) => [kind, (total - (before.get(kind) ?? 0)) / count]));
}

async function measure(
  engine: TaskEngine,
  label: string,
  workers: string,
  processes: Processes,
  counters: Counters = {},
  postgresSource?: PostgresCounts['source'],
): Promise<Figures> {
  await saturate(engine, WARMUP_MS);
  const meters = Object.entries({ requestor: () => [process.pid], ...processes }).map(
    ([group, pids]) => [group, cpuOf(pids)] as const,
  );
  const before = await readAll(counters);
  const { count, seconds } = await saturate(engine, MEASURE_MS);
  const cpu = Object.fromEntries(meters.map(([group, meter]) => [group, meter.stop() / count]));
  const after = await readAll(counters);
  const kinds = Object.fromEntries(
    Object.keys(counters).map((name) => [name, perTask(before[name]!, after[name]!, count)]),
  );
  const counts = Object.fromEntries(
    Object.entries(kinds).map(([name, byKind]) => [name, Object.values(byKind).reduce((sum, n) => sum + n, 0)]),
  );
  const samples = await steady(engine, MEASURE_MS);
  return {
    label,
    workers,
    tasksPerSecond: count / seconds,
    pickup: samples.map((s) => s.pickup),
    endToEnd: samples.map((s) => s.endToEnd),
    wake: samples.map((s) => s.wake),
    cpu,
    counts,
    kinds,
    ...(postgresSource && { postgresSource }),
  };
}

/** Calls of each kind of command the Redis server has served (INFO commandstats), by lower-case name. */
async function redisCommandsByKind(url: string): Promise<Map<string, number>> {
  const client = new Redis(url);
  try {
    const stats = await client.info('commandstats');
    return new Map([...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1] as string, Number(m[2])]));
  } finally {
    client.disconnect();
  }
}

/** The Redis server's process id (INFO), so its CPU counts: the queue's and the Redis store's work runs there. */
async function redisPid(url: string): Promise<number> {
  const client = new Redis(url);
  try {
    return Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1]);
  } finally {
    await client.quit();
  }
}

const ENGINE = {
  sweepIntervalMs: 0,
  recoveryIntervalMs: 0,
  limits: { maxActivePerOwner: 100_000, maxStoredPerOwner: 1_000_000 },
};

async function baseline(dir: string): Promise<Figures> {
  const engine = new TaskEngine({ ...ENGINE, store: new SqliteStore({ path: join(dir, 'baseline.db') }) });
  const run = createTaskWork(createFixtureServer);
  const work: TaskWork = (context) => {
    workStarted.set(context.task.taskId, Date.now());
    return run(context);
  };
  engine.setExecutor(new InProcessExecutor({ engine, work, concurrency: CONCURRENCY }));
  await engine.start();
  try {
    return await measure(engine, 'sqlite, in-process', '—', {});
  } finally {
    await engine.close();
  }
}

async function distributed(backend: Backend, redisUrl: string, workerCount: number): Promise<Figures> {
  const queueName = `mcp-tasks-bench-${randomUUID().slice(0, 8)}`;
  const engine = new TaskEngine({ ...ENGINE, store: backend.open() });
  const producer = new QueueExecutor({ engine, connection: redisUrl, queueName });
  engine.setExecutor(producer);
  await engine.start();
  const workers: ChildProcess[] = [];
  try {
    for (let i = 0; i < workerCount; i++) workers.push(await startWorker(backend, redisUrl, queueName, CONCURRENCY));
    const redis = await redisPid(redisUrl);
    const processes: Processes = {
      workers: () => workers.map((worker) => worker.pid as number),
      redis: () => [redis],
      ...(backend.kind === 'postgres' && { postgres: () => processesNamed('postgres') }),
    };
    const counters: Counters = { redis: () => redisCommandsByKind(redisUrl) };
    let source: PostgresCounts['source'] | undefined;
    if (backend.kind === 'postgres')
      counters['postgres'] = async () => {
        const counted = await postgresCounts(backend.url);
        source = counted.source;
        return counted.totals;
      };
    const label = `${backend.kind}, BullMQ queue`;
    const figures = await measure(engine, label, String(workerCount), processes, counters);
    return { ...figures, ...(source && { postgresSource: source }) };
  } finally {
    await Promise.all(workers.map(stopWorker));
    await producer.close();
    await engine.close();
    await deleteKeys(redisUrl, `bull:${queueName}:*`);
  }
}

const redisUrl = process.env['MCP_TASKS_BENCH_REDIS_URL'] ?? process.env['MCP_TASKS_TEST_REDIS_URL'];
const postgresUrl = process.env['MCP_TASKS_BENCH_POSTGRES_URL'] ?? process.env['MCP_TASKS_TEST_POSTGRES_URL'];

console.log(
  `mcp-tasks distributed benchmark — tasks/s with ${IN_FLIGHT} tasks in flight; pickup and end-to-end latency at a ` +
    `steady ${STEADY_RATE} tasks/s; ${CONCURRENCY} slots per executor; ${MEASURE_MS / 1000} s per measurement\n`,
);
const only = process.env['BENCH_ONLY'];
const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-'));
const rows: Figures[] = [];
const raw = new Map<number, RawFigures>();
let callCpu = Number.NaN;
try {
  if (only === undefined) rows.push(await baseline(dir));
  callCpu = await internalCallCpu({ inFlight: IN_FLIGHT, warmupMs: WARMUP_MS, measureMs: 3000 });
  if (redisUrl && process.env['BENCH_RAW'] !== '0') {
    const pid = await redisPid(redisUrl);
    for (const workers of WORKER_COUNTS) {
      raw.set(
        workers,
        await rawBullmq({
          redisUrl,
          workers,
          concurrency: CONCURRENCY,
          inFlight: IN_FLIGHT,
          warmupMs: WARMUP_MS,
          measureMs: MEASURE_MS,
          redisPid: pid,
        }),
      );
    }
  }
  if (!redisUrl) {
    console.log('MCP_TASKS_TEST_REDIS_URL is not set: no queue rows (eval "$(scripts/services.sh start)" first)\n');
  } else {
    const backends: Array<() => Promise<Backend>> = [];
    if (!postgresUrl) console.log('MCP_TASKS_TEST_POSTGRES_URL is not set: no PostgreSQL rows\n');
    else if (only !== 'redis') backends.push(() => postgresBackend(postgresUrl));
    if (only !== 'postgres') backends.push(() => redisBackend(redisUrl));
    for (const open of backends) {
      const backend = await open();
      try {
        for (const count of WORKER_COUNTS) rows.push(await distributed(backend, redisUrl, count));
      } finally {
        await backend.dispose();
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const ms = (value: number) => `${fmt(value)} ms`;
console.log('store, executor            workers   tasks/s   pickup p50   pickup p99   end-to-end p50   p99');
for (const row of rows) {
  console.log(
    `${row.label.padEnd(26)} ${row.workers.padStart(7)} ${fmt(row.tasksPerSecond).padStart(9)} ` +
      `${ms(percentile(row.pickup, 50)).padStart(12)} ${ms(percentile(row.pickup, 99)).padStart(12)} ` +
      `${ms(percentile(row.endToEnd, 50)).padStart(16)} ${ms(percentile(row.endToEnd, 99)).padStart(10)}`,
  );
}
console.log(
  '\nwake at the steady rate: the terminal write, in the worker that ran the task, to the waiter of this (another)' +
    ' process waking: what a waiting tasks/result waits on (goal p50 ≤ 10 ms across instances)',
);
for (const row of rows.filter((row) => row !== rows.find((r) => r.workers === '—')))
  console.log(
    `${`${row.label}, ${row.workers} worker(s)`.padEnd(40)} p50 ${ms(percentile(row.wake, 50))}, p99 ${ms(percentile(row.wake, 99))}`,
  );
const groups = ['requestor', 'workers', 'redis', 'postgres'];
const cores = availableParallelism();
console.log(
  `\nCPU a task at saturation, ms (every process's user + system time ÷ tasks completed); ceiling: ${cores} cores' time ÷ all`,
);
console.log(
  `store, executor            workers ${groups.map((group) => group.padStart(10)).join('')}       all   ceiling/s`,
);
for (const row of rows) {
  const all = Object.values(row.cpu).reduce((sum, ms) => sum + ms, 0);
  const cell = (group: string) => (row.cpu[group] === undefined ? '—' : fmt(row.cpu[group], 2)).padStart(10);
  console.log(
    `${row.label.padEnd(26)} ${row.workers.padStart(7)} ${groups.map(cell).join('')} ${fmt(all, 2).padStart(9)} ` +
      `${fmt((cores * 1000) / all).padStart(11)}`,
  );
}
const base = rows.find((row) => row.workers === '—');
if (base) {
  console.log('\nratios (tasks/s):');
  for (const row of rows.slice(1)) {
    console.log(
      `${`${row.label}, ${row.workers} worker(s)`.padEnd(40)} vs SQLite in-process ${fmt(row.tasksPerSecond / base.tasksPerSecond, 2)}`,
    );
  }
}
if (raw.size > 0) {
  console.log('\nagainst raw BullMQ (empty jobs, same workers, concurrency, in-flight and Redis):');
  console.log(
    'configuration                              tasks/s   raw jobs/s   ratio   Redis cmds/task   raw cmds/job   ratio   PG stmts/task',
  );
  for (const row of rows.filter((row) => row !== base)) {
    const queue = raw.get(Number(row.workers));
    if (!queue) continue;
    const commands = row.counts['redis'] ?? Number.NaN;
    // Transactions stand in for statements where pg_stat_statements is not loaded (marked: they lag).
    const statements = row.counts['postgres'];
    const mark = row.postgresSource === 'transactions' ? ' (xacts)' : '';
    console.log(
      `${`${row.label}, ${row.workers} worker(s)`.padEnd(40)} ${fmt(row.tasksPerSecond).padStart(9)} ` +
        `${fmt(queue.jobsPerSecond).padStart(12)} ${fmt(row.tasksPerSecond / queue.jobsPerSecond, 2).padStart(7)} ` +
        `${fmt(commands, 1).padStart(17)} ${fmt(queue.redisCommands, 1).padStart(14)} ` +
        `${fmt(commands / queue.redisCommands, 2).padStart(7)} ${(statements === undefined ? '—' : fmt(statements, 1) + mark).padStart(15)}`,
    );
  }
  for (const [workers, queue] of raw) {
    const all = Object.values(queue.cpu).reduce((sum, ms) => sum + ms, 0);
    console.log(
      `raw BullMQ, ${workers} worker(s): CPU a job ${fmt(all, 3)} ms (requestor ${fmt(queue.cpu['requestor'] ?? 0, 3)}, workers ${fmt(queue.cpu['workers'] ?? 0, 3)}, redis ${fmt(queue.cpu['redis'] ?? 0, 3)})`,
    );
  }
}
console.log(
  `\nthe internal MCP call alone (the task's request on the author's server, in process, ${IN_FLIGHT} at once): ` +
    `${fmt(callCpu, 3)} ms CPU a call; its share of a worker's CPU a task:`,
);
for (const row of rows) {
  const workers = row.cpu['workers'];
  if (workers !== undefined)
    console.log(`${`${row.label}, ${row.workers} worker(s)`.padEnd(40)} ${fmt((100 * callCpu) / workers)} %`);
}
for (const kind of ['postgres', 'redis']) {
  const [one, two] = rows.filter((row) => row.label.startsWith(kind));
  if (one && two)
    console.log(`${`${kind}: 2 workers vs 1`.padEnd(40)} ${fmt(two.tasksPerSecond / one.tasksPerSecond, 2)}`);
}
console.log("\nRedis commands a task by kind (at least 0.5; a script's own commands count by their kind):");
for (const row of rows) {
  const kinds = row.kinds['redis'];
  if (!kinds) continue;
  const shown = Object.entries(kinds)
    .filter(([, calls]) => calls >= 0.5)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, calls]) => `${kind} ${fmt(calls, 1)}`);
  console.log(
    `${`${row.label}, ${row.workers} worker(s)`.padEnd(40)} all ${fmt(row.counts['redis']!, 1)}: ${shown.join(', ')}`,
  );
}
const statementRows = rows.filter((row) => row.postgresSource === 'statements');
if (statementRows.length > 0)
  console.log('\nPostgreSQL statements a task by statement (pg_stat_statements; at least 0.05 a task):');
for (const row of statementRows) {
  console.log(`${row.label}, ${row.workers} worker(s): all ${fmt(row.counts['postgres']!, 2)}`);
  const kinds = Object.entries(row.kinds['postgres'] ?? {})
    .filter(([, calls]) => calls >= 0.05)
    .sort((a, b) => b[1] - a[1]);
  for (const [kind, calls] of kinds) console.log(`  ${fmt(calls, 2).padStart(6)}  ${kind}`);
}
