/**
 * bench:console — the console's list page and task page with 100,000 tasks stored (SQLite; every 100th with 20
 * events, every 1,000th with a webhook subscription and three deliveries waiting), through its HTTP API.
 * Prints p50/p95/p99 response times per page kind (goal: p99 ≤ 50 ms).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { serveConsole, TaskConsole } from '../src/console/index.js';
import { readOwners } from '../src/console/readOwners.js';
import { readSubscriptions } from '../src/console/readSubscriptions.js';
import type { TaskRecord } from '../src/engine/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { fmt, percentile } from './measure.js';

const TASKS = Number(process.env['BENCH_TASKS'] ?? 100_000);
const SAMPLES = 300;
// A console token has at least 16 characters.
const BENCH_TOKEN = 'bench-console-token';
const TOOLS = ['index', 'render', 'export', 'sync', 'report'];
const DIALECTS = ['core-2025-11-25', 'ext-tasks', 'sep-1686'];

const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-console-'));
const path = join(dir, 'tasks.db');
const seed = new SqliteStore({ path, durability: 'normal' });
await seed.init();
await seed.timeline.init();
await seed.eventLog.init();
await seed.webhooks.init();
const now = Date.now();
const ids: string[] = [];
const started = performance.now();
for (let i = 0; i < TASKS; i += 500) {
  const batch: Array<Promise<unknown>> = [];
  for (let j = i; j < Math.min(TASKS, i + 500); j++) {
    const createdAt = now - 2 * 3600_000 + Math.floor((j / TASKS) * 2 * 3600_000);
    const done = j % 10 !== 0;
    const record: TaskRecord = {
      taskId: randomUUID(),
      owner: `principal:owner-${j % 50}`,
      status: done ? (j % 23 === 0 ? 'failed' : 'completed') : 'working',
      createdAt,
      lastUpdatedAt: createdAt + 1500,
      retention: { kind: 'ttl', ttlMs: 7 * 24 * 3600_000 },
      expiresAt: createdAt + 7 * 24 * 3600_000,
      request: { method: 'tools/call', params: { name: TOOLS[j % 5] as string, arguments: { item: `item-${j}` } } },
      inputRequests: {},
      inputAnswers: {},
      nextInputSeq: 1,
      dialect: DIALECTS[j % 3] as string,
      toolErrorStatus: 'failed',
      retrySafe: false,
      attempts: 1,
      meta: {},
      version: 1,
      ...(done && { terminalAt: createdAt + 1500 + (j % 997) }),
    };
    ids.push(record.taskId);
    batch.push(seed.insert(record));
    if (j % 100 === 0)
      batch.push(
        seed.timeline.append(
          record.taskId,
          [
            { at: createdAt, kind: 'created', status: 'working' },
            { at: createdAt + 10, kind: 'started', attempt: 1, runner: 'worker-1' },
            { at: createdAt + 1500, kind: 'status', from: 'working', status: record.status },
          ],
          200,
        ),
      );
    // Every 100th task emitted 20 events (its page shows the latest 50 of a log).
    if (j % 100 === 0)
      batch.push(
        (async () => {
          for (let seq = 0; seq < 20; seq++)
            await seed.eventLog.append(
              record.taskId,
              { type: 'com.example.finding', data: { seq, title: `finding ${seq} of item-${j}` }, at: createdAt + seq },
              1000,
            );
        })(),
      );
    // Every 1,000th task (a running one) has a webhook subscription with three deliveries waiting.
    if (j % 1000 === 0) batch.push(subscribe(record));
  }
  await Promise.all(batch);
}
await seed.close();

async function subscribe(record: TaskRecord): Promise<void> {
  const id = `whsub_${record.taskId}`;
  await seed.webhooks.saveSubscription(
    {
      id,
      owner: record.owner,
      name: 'com.example.finding',
      url: 'https://hooks.example.com/mcp',
      arguments: JSON.stringify({ taskId: record.taskId }),
      scope: record.taskId,
      secrets: [{ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }],
      expiresAt: null,
      createdAt: record.createdAt,
      verified: true,
    },
    undefined,
    100,
  );
  for (let n = 0; n < 3; n++)
    await seed.webhooks.enqueue(
      { subscriptionId: id, webhookId: `${record.taskId}:${n}`, kind: 'event', body: '{}', cursor: null, dueAt: now },
      1000,
    );
}
console.log(`seeded ${fmt(TASKS)} tasks in ${fmt((performance.now() - started) / 1000, 1)} s`);

const store = new SqliteStore({ path });
const taskConsole = await TaskConsole.overStore(store, { token: BENCH_TOKEN });
const running = await serveConsole(taskConsole, { port: 0 });
const headers = { authorization: `Bearer ${BENCH_TOKEN}` };
const origin = new URL(running.url).origin;

async function measure(label: string, url: (i: number) => string, samples = SAMPLES): Promise<void> {
  for (let i = 0; i < Math.min(20, samples); i++) await (await fetch(url(i), { headers })).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    const response = await fetch(url(i), { headers });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${label}: ${response.status}`);
    times.push(performance.now() - start);
  }
  const p99 = percentile(times, 99);
  console.log(
    `${label.padEnd(44)} p50 ${fmt(percentile(times, 50), 1).padStart(6)} ms  p95 ${fmt(percentile(times, 95), 1).padStart(6)} ms  p99 ${fmt(p99, 1).padStart(6)} ms  ${p99 <= 50 ? 'ok' : 'over the 50 ms goal'}`,
  );
}

const api = `${origin}/console/api`;
await measure('list page (first 50, counts)', () => `${api}/tasks`);
await measure('list page, status=working', () => `${api}/tasks?status=working`);
await measure('list page, owner', (i) => `${api}/tasks?owner=principal:owner-${i % 50}`);
await measure('list page, tool + generation (scanned)', () => `${api}/tasks?tool=render&generation=sep-1686`);
await measure('list page, text search (scan budget 1000)', () => `${api}/tasks?q=item-99999x`);
await measure('task page (+ timeline, events, webhooks)', (i) => `${api}/tasks/${ids[(i * 100) % ids.length]}`);
// The pages measured are those of tasks with events (and, every tenth, a subscription): check one shows them.
const page = (await (await fetch(`${api}/tasks/${ids[0]}`, { headers })).json()) as {
  events?: { total: number };
  webhooks?: Array<{ deliveries: unknown[] }>;
};
if (page.events?.total !== 20 || page.webhooks?.[0]?.deliveries.length !== 3)
  throw new Error('the task page does not show the seeded events and deliveries');
await measure('overview (chart, last hour)', () => `${api}/overview`);
await measure('owners view (shared for 5 s)', () => `${api}/owners`);
await measure('subscriptions page (shared for 5 s)', () => `${api}/subscriptions`);
await measure(
  'export, one owner, JSON lines (2,000 tasks)',
  (i) => `${api}/export?format=jsonl&owner=principal:owner-${i % 50}`,
  20,
);
// The owners view as each 5 s refresh reads it, without the shared copy.
const owners: number[] = [];
for (let i = 0; i < 10; i++) {
  const start = performance.now();
  await readOwners(store.browse, Date.now(), { storedBytesOf: store.storedBytesOf.bind(store) });
  owners.push(performance.now() - start);
}
console.log(
  `${'owners view, read afresh (10 reads)'.padEnd(44)} p50 ${fmt(percentile(owners, 50), 1).padStart(6)} ms  max ${fmt(Math.max(...owners), 1).padStart(6)} ms`,
);
// The subscriptions page as each 5 s refresh reads it, without the shared copy.
const subscriptions: number[] = [];
let listed = 0;
for (let i = 0; i < 10; i++) {
  const start = performance.now();
  listed = (await readSubscriptions(store.browse, store.webhooks, Date.now())).subscriptions.length;
  subscriptions.push(performance.now() - start);
}
console.log(
  `${`subscriptions, read afresh (${listed} listed)`.padEnd(44)} p50 ${fmt(percentile(subscriptions, 50), 1).padStart(6)} ms  max ${fmt(Math.max(...subscriptions), 1).padStart(6)} ms`,
);
await running.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
