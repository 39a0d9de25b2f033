// npm run bench:sqlite-flush — SQLite with durability full, the WAL flushed on the thread pool (the default) against
// SQLite's own fsync inside each commit: 32 writers each running a task's store lifecycle (insert, three reads, two
// version-checked updates with their timeline entries, five more reads) while a reader polls one task every
// millisecond. Printed per mode: lifecycles/s, the event loop's delay (p99 and max: how long the loop was held, which
// every other request of the server waits out) and the poll's p99 latency. Rounds alternate the two modes
// (FLUSH_ROUNDS, default 3; FLUSH_TASKS lifecycles a round, default 3000) and the medians are compared.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

import type { TaskRecord } from '../src/engine/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { benchRecord } from './benchRecord.js';
import { fmt, percentile } from './measure.js';

const ROUNDS = Number(process.env['FLUSH_ROUNDS'] ?? 3);
const TASKS = Number(process.env['FLUSH_TASKS'] ?? 3000);
const WRITERS = 32;

interface Round {
  perSecond: number;
  loopP99: number;
  loopMax: number;
  pollP99: number;
}

async function lifecycle(store: SqliteStore, i: number): Promise<void> {
  let record: TaskRecord = benchRecord(i, Date.now(), 10);
  await store.insert(record);
  for (let k = 0; k < 3; k++) await store.get(record.taskId);
  for (const status of ['working', 'completed'] as const) {
    const next = { ...record, status, version: record.version + 1, lastUpdatedAt: Date.now() };
    await store.replace(next, record.version);
    await store.timeline.append(record.taskId, [{ at: next.lastUpdatedAt, kind: 'status', status }], 100);
    record = next;
  }
  for (let k = 0; k < 5; k++) await store.get(record.taskId);
}

async function round(dir: string, offLoop: boolean, n: number): Promise<Round> {
  const store = new SqliteStore({
    path: join(dir, `${offLoop ? 'pool' : 'commit'}-${n}.db`),
    flushOnThreadPool: offLoop,
  });
  await store.init();
  await store.timeline.init();
  const polled = benchRecord(-1, Date.now(), 10);
  await store.insert(polled);
  const polls: number[] = [];
  let done = false;
  const poller = (async () => {
    while (!done) {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 1));
      await store.get(polled.taskId);
      polls.push(performance.now() - started - 1);
    }
  })();
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < TASKS) await lifecycle(store, next++);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  delay.disable();
  done = true;
  await poller;
  await store.close();
  return {
    perSecond: TASKS / seconds,
    loopP99: delay.percentile(99) / 1e6,
    loopMax: delay.max / 1e6,
    pollP99: percentile(polls, 99),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-flush-'));
try {
  const runs: Record<'pool' | 'commit', Round[]> = { pool: [], commit: [] };
  for (let n = 0; n < ROUNDS; n++) {
    runs.commit.push(await round(dir, false, n));
    runs.pool.push(await round(dir, true, n));
  }
  const median = (mode: 'pool' | 'commit', key: keyof Round) =>
    percentile(
      runs[mode].map((r) => r[key]),
      50,
    );
  console.log(
    `bench:sqlite-flush — durability full, ${WRITERS} writers, ${fmt(TASKS)} store lifecycles a round, medians of ${ROUNDS} alternating rounds  (load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})\n`,
  );
  for (const [mode, label] of [
    ['commit', 'fsync inside the commit (synchronous=FULL)'],
    ['pool', 'WAL flushed on the thread pool (default)'],
  ] as const) {
    console.log(
      `${label.padEnd(44)} lifecycles/s ${fmt(median(mode, 'perSecond')).padStart(6)}   event-loop delay p99 ${fmt(median(mode, 'loopP99'), 2).padStart(6)} ms, max ${fmt(median(mode, 'loopMax'), 1).padStart(6)} ms   poll p99 ${fmt(median(mode, 'pollP99'), 2).padStart(6)} ms`,
    );
  }
  console.log(
    `\nratios (thread pool ÷ in commit): lifecycles/s ${fmt(median('pool', 'perSecond') / median('commit', 'perSecond'), 2)}   event-loop delay p99 ${fmt(median('pool', 'loopP99') / median('commit', 'loopP99'), 2)}   poll p99 ${fmt(median('pool', 'pollP99') / median('commit', 'pollP99'), 2)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
