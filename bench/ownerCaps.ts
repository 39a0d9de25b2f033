// npm run bench:owner-caps — what the per-owner caps cost a creation: inserts/s into one owner holding 0, 1,000 and
// 9,000 stored tasks (100 of them active), with the engine's default caps checked atomically by the store, against
// the same inserts without caps. SQLite always; PostgreSQL and Redis when MCP_TASKS_TEST_POSTGRES_URL /
// MCP_TASKS_TEST_REDIS_URL are set (as `scripts/services.sh start` prints).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';

import { DEFAULT_LIMITS, type OwnerLimits, type TaskRecord, type TaskStore } from '../src/engine/index.js';
import { PostgresStore, RedisStore, SqliteStore } from '../src/stores/index.js';
import { fmt, opsPerSecond, percentile } from './measure.js';

const CAPS: OwnerLimits = { maxActive: DEFAULT_LIMITS.maxActivePerOwner, maxStored: DEFAULT_LIMITS.maxStoredPerOwner };
const SIZES = [0, 1000, 9000];

function record(owner: string, status: TaskRecord['status'] = 'completed'): TaskRecord {
  const now = Date.now();
  return {
    taskId: randomUUID(),
    owner,
    status,
    createdAt: now,
    lastUpdatedAt: now,
    retention: { kind: 'ttl', ttlMs: 86_400_000 },
    expiresAt: now + 86_400_000,
    request: { method: 'tools/call', params: { name: 'noop', arguments: {} } },
    inputRequests: {},
    inputAnswers: {},
    nextInputSeq: 1,
    dialect: 'bench',
    toolErrorStatus: 'failed',
    retrySafe: false,
    attempts: 0,
    meta: {},
    version: 1,
  };
}

/**
 * Inserts/s into an owner already holding `size` tasks, with and without caps (rounds alternate, so a neighbour's
 * burst on a shared machine hits both alike; medians of 7 rounds).
 */
async function measure(store: TaskStore, size: number): Promise<{ plain: number; capped: number }> {
  const owners = { plain: `owner-plain-${randomUUID()}`, capped: `owner-capped-${randomUUID()}` };
  for (const owner of Object.values(owners)) {
    for (let i = 0; i < size; i++) await store.insert(record(owner, i < 50 ? 'working' : 'completed'));
  }
  const rounds: { plain: number[]; capped: number[] } = { plain: [], capped: [] };
  for (let round = 0; round < 7; round++) {
    for (const mode of ['plain', 'capped'] as const) {
      // Finished tasks, so the active cap never refuses; the stored cap leaves room for them but is still counted.
      const limits = mode === 'capped' ? { ...CAPS, maxStored: 1_000_000 } : {};
      rounds[mode].push(await opsPerSecond(() => store.insert(record(owners[mode]), limits), 300));
    }
  }
  return { plain: percentile(rounds.plain, 50), capped: percentile(rounds.capped, 50) };
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-owner-caps-'));
const stores: Array<[string, () => Promise<{ store: TaskStore; dispose(): Promise<void> }>]> = [
  [
    'SQLite',
    async () => ({ store: new SqliteStore({ path: join(dir, 'tasks.db'), changePollMs: 0 }), async dispose() {} }),
  ],
];
const pgUrl = process.env['MCP_TASKS_TEST_POSTGRES_URL'];
if (pgUrl) {
  stores.push([
    'PostgreSQL',
    async () => {
      const schema = `bench_caps_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      return {
        store: new PostgresStore({ connectionString: pgUrl, schema }),
        async dispose() {
          const admin = new pg.Client({ connectionString: pgUrl });
          await admin.connect();
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          await admin.end();
        },
      };
    },
  ]);
}
const redisUrl = process.env['MCP_TASKS_TEST_REDIS_URL'];
if (redisUrl) {
  stores.push([
    'Redis',
    async () => ({
      store: new RedisStore({ url: redisUrl, keyPrefix: `bench-caps-${randomUUID().slice(0, 8)}:` }),
      async dispose() {},
    }),
  ]);
}

console.log(`mcp-tasks per-owner caps — inserts/s into one owner, caps checked atomically vs. no caps\n`);
console.log('store        tasks held   no caps   with caps   ratio');
for (const [name, open] of stores) {
  const { store, dispose } = await open();
  await store.init();
  for (const size of SIZES) {
    const { plain, capped } = await measure(store, size);
    console.log(
      `${name.padEnd(12)} ${fmt(size).padStart(10)}   ${fmt(plain).padStart(7)}   ${fmt(capped).padStart(9)}   ${fmt(capped / plain, 2).padStart(5)}`,
    );
  }
  await store.close();
  await dispose();
}
rmSync(dir, { recursive: true, force: true });
