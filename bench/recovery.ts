// npm run bench:recovery — how soon a task whose process was killed with SIGKILL runs again, with default settings.
// Single node on SQLite: the fixture server runs a retry-safe task (slow_compute), is killed, and is started again on
// the same file; figures from that start: the server listening, the task running again (its new run's startedAt),
// the task completed (goal: running again ≤ 2 s after the start). Distributed (needs MCP_TASKS_TEST_REDIS_URL): the
// Redis store and the BullMQ queue with 2 bench worker processes; the worker running the task is killed; figures from
// the kill: the task running again on the other worker, and completed (goal ≤ 10 s by default).
// RECOVERY_RUNS (default 3) runs of each; the median and the worst are printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';

import { TaskEngine, type TaskRecord, type TaskStore } from '../src/engine/index.js';
import { QueueExecutor } from '../src/executors/index.js';
import { HttpSession } from './httpSession.js';
import { listeningUrl } from './listeningUrl.js';
import { fmt, percentile } from './measure.js';
import { deleteKeys, redisBackend, startWorker, stopWorker } from './queueBench.js';

const RUNS = Number(process.env['RECOVERY_RUNS'] ?? 3);
/** Length of the task's work, so that it is still running when its process is killed. */
const WORK_SECONDS = 1;
const FIXTURE = fileURLToPath(new URL('../examples/conformance/server.js', import.meta.url));

const load = () =>
  `load ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`;

/** Polls `read` every 5 ms until it returns a value; gives up after `ms`. */
async function until<T>(read: () => T | undefined | Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('gave up waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function kill(child: ChildProcess): Promise<unknown> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  return exited;
}

interface Timings {
  /** Single node only: from the restart until the server listens. */
  ready?: number;
  running: number;
  completed: number;
}

function startFixture(store: string): ChildProcess {
  return spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, MCP_TASKS_STORE: store, PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** One kill -9 and restart of the fixture server on SQLite; times from the restart. */
async function singleNode(dir: string, run: number): Promise<Timings> {
  const path = join(dir, `single-${run}.db`);
  const first = startFixture(path);
  let second: ChildProcess | undefined;
  // The task is read from the file itself: the bench takes no part in recovery.
  let db: Database.Database | undefined;
  try {
    const session = new HttpSession(await listeningUrl(first));
    await session.initialize();
    const created = await session.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: WORK_SECONDS },
      task: {},
    });
    const taskId = (created['task'] as { taskId: string }).taskId;
    db = new Database(path, { readonly: true });
    const select = db.prepare('SELECT data FROM mcp_tasks WHERE task_id = ?').pluck();
    const read = () => JSON.parse(select.get(taskId) as string) as TaskRecord;
    await until(() => (read().startedAt !== undefined ? true : undefined));
    await kill(first);

    const restarted = performance.timeOrigin + performance.now();
    second = startFixture(path);
    await listeningUrl(second);
    const ready = Date.now() - restarted;
    const running = await until(() => {
      const task = read();
      return task.attempts >= 2 && task.startedAt !== undefined ? task.startedAt - restarted : undefined;
    });
    await until(() => (read().status === 'completed' ? true : undefined));
    return { ready, running, completed: Date.now() - restarted };
  } finally {
    db?.close();
    if (first.exitCode === null && first.signalCode === null) await kill(first);
    if (second) await kill(second);
  }
}

/** One kill -9 of the worker running a task, of two on the Redis store and the BullMQ queue; times from the kill. */
async function distributed(redisUrl: string): Promise<Timings> {
  const backend = await redisBackend(redisUrl);
  const queueName = `mcp-tasks-bench-${randomUUID().slice(0, 8)}`;
  const store: TaskStore = backend.open();
  // The requestor's server, with the defaults: it takes part in recovery like every server and worker.
  const engine = new TaskEngine({ store, sweepIntervalMs: 0 });
  const producer = new QueueExecutor({ engine, connection: redisUrl, queueName });
  engine.setExecutor(producer);
  await engine.start();
  const workers: ChildProcess[] = [];
  try {
    for (let i = 0; i < 2; i++) workers.push(await startWorker(backend, redisUrl, queueName, 16));
    const { task } = await engine.create({
      owner: 'bench',
      dialect: 'bench',
      request: { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: WORK_SECONDS } } },
      retention: { kind: 'ttl', ttlMs: 3_600_000 },
      retrySafe: true,
    });
    const claimed = await until(async () => {
      const record = await store.get(task.taskId);
      return record?.runner?.startsWith('queue-worker:') ? record : undefined;
    });
    // The runner name of a queue worker ends with `:<pid>:<suffix>`.
    const pid = Number(claimed.runner?.split(':').at(-2));
    const victim = workers.find((child) => child.pid === pid);
    if (!victim) throw new Error(`no bench worker runs ${claimed.runner}`);
    await kill(victim);
    const killed = Date.now();
    const running = await until(async () => {
      const record = await store.get(task.taskId);
      return record && record.attempts > claimed.attempts && record.startedAt !== undefined
        ? record.startedAt - killed
        : undefined;
    });
    const done = await engine.waitForTerminal(task.taskId);
    if (done?.status !== 'completed') throw new Error(`the task ended ${done?.status}: ${done?.statusMessage}`);
    return { running, completed: Date.now() - killed };
  } finally {
    await Promise.all(workers.map(stopWorker));
    await producer.close();
    await engine.close();
    await deleteKeys(redisUrl, `bull:${queueName}:*`);
    await backend.dispose();
  }
}

function report(label: string, samples: Timings[], goal: string): void {
  const seconds = (pick: (t: Timings) => number | undefined) => {
    const values = samples.map(pick).filter((v): v is number => v !== undefined);
    if (values.length === 0) return '—';
    return `${fmt(percentile(values, 50) / 1000, 2)} s (worst ${fmt(Math.max(...values) / 1000, 2)} s)`;
  };
  console.log(label);
  if (samples.some((t) => t.ready !== undefined)) console.log(`  server listening     ${seconds((t) => t.ready)}`);
  console.log(`  task running again   ${seconds((t) => t.running)}   [${goal}]`);
  console.log(`  task completed       ${seconds((t) => t.completed)}   (its work takes ${WORK_SECONDS} s)`);
  console.log(`  (${load()})\n`);
}

console.log(`bench:recovery — kill -9 while a retry-safe task runs; default settings; median of ${RUNS} runs\n`);
const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-recovery-'));
try {
  const single: Timings[] = [];
  for (let run = 0; run < RUNS; run++) single.push(await singleNode(dir, run));
  report('single node, SQLite — from the restart of the killed server:', single, 'goal ≤ 2 s');

  const redisUrl = process.env['MCP_TASKS_BENCH_REDIS_URL'] ?? process.env['MCP_TASKS_TEST_REDIS_URL'];
  if (!redisUrl) {
    console.log('MCP_TASKS_TEST_REDIS_URL is not set: no distributed figures');
  } else {
    const queued: Timings[] = [];
    for (let run = 0; run < RUNS; run++) queued.push(await distributed(redisUrl));
    report('Redis store + BullMQ, 2 workers — from the kill of the worker running the task:', queued, 'goal ≤ 10 s');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
