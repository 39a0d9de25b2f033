// npm run bench:crash-resume — how long a workflow task stands still after a kill -9, with the default lease (15 s):
//  - SQLite, one server: from the kill to the task's re-run on the restarted server (its statusMessage says so), and
//    to the restarted server listening. The restarted store takes the dead process's runner locks over at once.
//  - Queue executor (PostgreSQL store, BullMQ, 2 workers): from the kill of the worker running the task to the
//    other worker starting its next run. Bounded by the lease lapsing plus one recovery interval (= the lease).
// Needs MCP_TASKS_TEST_REDIS_URL and MCP_TASKS_TEST_POSTGRES_URL for the queue rows:
//   eval "$(scripts/services.sh start)"; npm run bench:crash-resume; scripts/services.sh stop
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import pg from 'pg';

import { kill9, startFixture, startFixtureWorker } from './fixtureProcess.js';
import { fmt } from './measure.js';

const TRIALS = Number(process.env['MCP_TASKS_BENCH_TRIALS'] ?? 3);
const LEASE_MS = 15_000;
const STEPS = { name: 'journaled_steps', arguments: { steps: 4, stepMs: 1500, label: 'resume' } };
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every 20 ms until it holds; the time it first held. */
async function when(probe: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<number> {
  const start = Date.now();
  while (!(await probe())) {
    if (Date.now() - start > timeoutMs) throw new Error('not reached in time');
    await pause(20);
  }
  return Date.now();
}

const rerunning = (task: Record<string, unknown>) => String(task['statusMessage'] ?? '').startsWith('Re-running');

async function sqliteTrial(): Promise<{ listening: number; resumed: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-resume-'));
  const env = { MCP_TASKS_STORE: join(dir, 'tasks.db') };
  let server = await startFixture(env);
  try {
    const taskId = (await server.call('tools/call', STEPS))['taskId'] as string;
    await pause(700); // inside the first step, so the re-run's statusMessage stands until that step ends again
    const killed = Date.now();
    await kill9(server.child);
    server = await startFixture(env);
    const listening = Date.now() - killed;
    const resumed = (await when(async () => rerunning(await server.call('tasks/get', { taskId })))) - killed;
    return { listening, resumed };
  } finally {
    server.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function queueTrial(redisUrl: string, postgresUrl: string): Promise<{ recovered: number; resumed: number }> {
  const database = `mcp_tasks_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  const store = new URL(postgresUrl);
  store.pathname = `/${database}`;
  const queue = `mcp-tasks-bench-${randomUUID().slice(0, 8)}`;
  const env = { MCP_TASKS_STORE: store.toString(), REDIS_URL: redisUrl, MCP_TASKS_QUEUE: queue };
  const server = await startFixture({ ...env, MCP_TASKS_EXECUTOR: 'queue' });
  const workers = [await startFixtureWorker(env), await startFixtureWorker(env)];
  try {
    const taskId = (await server.call('tools/call', STEPS))['taskId'] as string;
    const started = (logs: Array<Record<string, unknown>>, attempt: number) =>
      logs.some(
        (line) => line['message'] === 'task started' && line['taskId'] === taskId && line['attempt'] === attempt,
      );
    await when(() => workers.some((worker) => started(worker.logs, 1)));
    const [runner, other] = started(workers[0]?.logs ?? [], 1) ? workers : [...workers].reverse();
    await pause(700);
    const killed = Date.now();
    await kill9(runner!.child);
    // Re-queued by recovery (its statusMessage says so until the new run's first step ends).
    const recovered =
      (await when(async () => started(other!.logs, 2) || rerunning(await server.call('tasks/get', { taskId })))) -
      killed;
    const resumed = (await when(() => started(other!.logs, 2))) - killed;
    return { recovered, resumed };
  } finally {
    for (const worker of workers) worker.child.kill('SIGKILL');
    server.child.kill('SIGTERM');
    await pause(500);
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
    const redis = new Redis(redisUrl);
    const keys = await redis.keys(`bull:${queue}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
}

const range = (values: number[]) =>
  `${fmt(Math.min(...values) / 1000, 2)}–${fmt(Math.max(...values) / 1000, 2)} s (${fmt(
    Math.min(...values) / LEASE_MS,
    2,
  )}–${fmt(Math.max(...values) / LEASE_MS, 2)} leases)`;

console.log(`kill -9 to resume, default lease ${LEASE_MS / 1000} s, ${TRIALS} trials each`);
const sqlite = [];
for (let trial = 0; trial < TRIALS; trial++) sqlite.push(await sqliteTrial());
console.log(`SQLite, server restarted: listening after ${range(sqlite.map((t) => t.listening))}`);
console.log(`  re-run after ${range(sqlite.map((t) => t.resumed))}`);

const redisUrl = process.env['MCP_TASKS_BENCH_REDIS_URL'] ?? process.env['MCP_TASKS_TEST_REDIS_URL'];
const postgresUrl = process.env['MCP_TASKS_BENCH_POSTGRES_URL'] ?? process.env['MCP_TASKS_TEST_POSTGRES_URL'];
if (!redisUrl || !postgresUrl) {
  console.log('MCP_TASKS_TEST_REDIS_URL / MCP_TASKS_TEST_POSTGRES_URL not set: no queue rows');
} else {
  const queued = [];
  for (let trial = 0; trial < TRIALS; trial++) queued.push(await queueTrial(redisUrl, postgresUrl));
  console.log(
    `Queue executor (PostgreSQL, 2 workers), worker killed: recovered after ${range(queued.map((t) => t.recovered))}`,
  );
  console.log(`  next run started on the other worker after ${range(queued.map((t) => t.resumed))}`);
}
