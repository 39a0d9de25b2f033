// `npm run bench:sqlite-wake`: two processes share one SQLite file. This one waits for a task to end; the other ends
// it. Prints how long after the other process committed the completion the waiter here woke (the engine's 5 s re-check
// is what it would be without the change signal), and what the signal costs: CPU per poll of `PRAGMA data_version`
// while nothing changes, and per tick that finds a change, with many tasks watched.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { TaskEngine } from '../src/engine/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import type { SqliteEventBus } from '../src/stores/sqlite/SqliteEventBus.js';
import { fmt, percentile } from './measure.js';

const ROUNDS = 100;
const POLL_MS = 20;
const RECHECK_MS = 5000;
const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-sqlite-wake-'));
const path = join(dir, 'tasks.db');
const request = { method: 'tools/call', params: { name: 'noop', arguments: {} } };

const store = new SqliteStore({ path, changePollMs: POLL_MS });
const engine = new TaskEngine({ store, sweepIntervalMs: 0, recoveryIntervalMs: 0, recheckIntervalMs: RECHECK_MS });
await engine.start();
const peer = fork(fileURLToPath(new URL('./sqliteWakePeer.js', import.meta.url)), [path]);
const replies = new Map<string, (committedAt: number) => void>();
await new Promise<void>((resolve) =>
  peer.on('message', (message: { ready?: boolean; taskId?: string; committedAt?: number }) => {
    if (message.ready) resolve();
    if (message.taskId) replies.get(message.taskId)?.(message.committedAt as number);
  }),
);
const now = () => performance.timeOrigin + performance.now();

// ---- wake-up latency --------------------------------------------------------------------------------------------
const latencies: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const { task } = await engine.create({ owner: 'bench', request, dialect: 'bench', run: false });
  const woken = engine.waitForTerminal(task.taskId).then(() => now());
  const committed = new Promise<number>((resolve) => replies.set(task.taskId, resolve));
  // A random phase against the poll timer, as a real completion has.
  await new Promise((resolve) => setTimeout(resolve, Math.random() * POLL_MS));
  peer.send({ taskId: task.taskId });
  const [wokeAt, committedAt] = await Promise.all([woken, committed]);
  latencies.push(wokeAt - committedAt);
  await engine.delete('bench', task.taskId);
}

// ---- cost ---------------------------------------------------------------------------------------------------------
/** CPU time of this process over `ms`, in microseconds. */
async function cpuOver(ms: number): Promise<number> {
  const start = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = process.cpuUsage(start);
  return used.user + used.system;
}
const MEASURE_MS = 3000;
const ticks = MEASURE_MS / POLL_MS;
// One idle poll (nothing changed since the last): what every process pays per tick.
const POLLS = 20_000;
const pollStart = process.cpuUsage();
// The store's bus is typed by its contract; the poll is this bus's own.
const bus = store.events as SqliteEventBus;
for (let i = 0; i < POLLS; i++) bus.poll();
const pollUsed = process.cpuUsage(pollStart);
const idlePoll = (pollUsed.user + pollUsed.system) / POLLS;
const offs: Array<() => void> = [];
for (let i = 0; i < 1000; i++) {
  const { task } = await engine.create({ owner: `watch-${i % 50}`, request, dialect: 'bench', run: false });
  offs.push(store.events.subscribe(task.taskId, () => {}));
}
const quiet = await cpuOver(MEASURE_MS);
// The other process changes one unrelated task every tick: each tick here then reads the 1000 watched versions back.
const noise = await engine.create({ owner: 'noise', request, dialect: 'bench', run: false });
peer.send({ churn: noise.task.taskId });
const busy = await cpuOver(MEASURE_MS);
peer.send({ stop: true });
for (const off of offs) off();

const p50 = percentile(latencies, 50);
const p99 = percentile(latencies, 99);
console.log(
  `mcp-tasks SQLite cross-process wake-up — ${ROUNDS} completions in another process, poll every ${POLL_MS} ms\n`,
);
console.log(
  `wake-up after the other process's commit: p50 ${fmt(p50, 1)} ms, p99 ${fmt(p99, 1)} ms, max ${fmt(Math.max(...latencies), 1)} ms`,
);
console.log(
  `  vs the ${RECHECK_MS / 1000} s re-check without the signal: ${fmt(RECHECK_MS / p50)}x sooner at p50 (goal: p99 ≤ 100 ms)`,
);
console.log(`cost, CPU of this process:`);
console.log(
  `  one poll when nothing changed: ${fmt(idlePoll, 1)} µs (every ${POLL_MS} ms: ${fmt((idlePoll / (POLL_MS * 1000)) * 100, 3)}% of a core)`,
);
console.log(`  1000 tasks watched, nothing changing: ${fmt(quiet / ticks, 1)} µs per tick, whole process`);
console.log(
  `  1000 tasks watched, another process changing a task every tick: ${fmt(busy / ticks, 1)} µs per tick, whole process (${fmt((busy - quiet) / ticks, 1)} µs more)`,
);

peer.disconnect();
await engine.close();
rmSync(dir, { recursive: true, force: true });
