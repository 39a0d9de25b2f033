// npm run bench:store — store throughput with 1k and 100k tasks stored, and the 100k/1k ratios (goal >= 0.8).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { TaskRecord, TaskStore } from '../src/engine/index.js';
import { MemoryStore } from '../src/stores/memory/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { benchRecord } from './benchRecord.js';
import { fmt, medianOpsPerSecond } from './measure.js';

const OWNERS = 10;
const PAGE = 50;

function record(i: number, now: number): TaskRecord {
  return benchRecord(i, now, OWNERS);
}

interface Figures {
  create: number;
  update: number;
  get: number;
  list: number;
}

async function measure(makeStore: () => TaskStore, size: number): Promise<Figures> {
  const store = makeStore();
  await store.init();
  const now = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < size; i++) {
    const r = record(i, now);
    ids.push(r.taskId);
    await store.insert(r);
  }
  let n = size;
  const create = await medianOpsPerSecond(async () => {
    await store.insert(record(n++, now));
  });
  const versions = new Map<string, number>();
  const update = await medianOpsPerSecond(async (i) => {
    const taskId = ids[(i * 7919) % ids.length] as string;
    const current = (await store.get(taskId)) as TaskRecord;
    const next = { ...current, statusMessage: `step ${i}`, version: current.version + 1 };
    await store.replace(next, current.version);
    versions.set(taskId, next.version);
  });
  const get = await medianOpsPerSecond(async (i) => {
    await store.get(ids[(i * 104_729) % ids.length] as string);
  });
  const list = await medianOpsPerSecond(async (i) => {
    const page = await store.list(`owner-${i % OWNERS}`, { limit: PAGE, now });
    const last = page[page.length - 1] as TaskRecord;
    await store.list(`owner-${i % OWNERS}`, {
      limit: PAGE,
      now,
      after: { createdAt: last.createdAt, taskId: last.taskId },
    });
  }).then((pairs) => pairs * 2);
  await store.close();
  return { create, update, get, list };
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-'));
const stores: Array<[string, (size: number) => () => TaskStore]> = [
  ['memory', () => () => new MemoryStore()],
  ['sqlite (durability full)', (size) => () => new SqliteStore({ path: join(dir, `full-${size}.db`) })],
  [
    'sqlite (durability normal)',
    (size) => () => new SqliteStore({ path: join(dir, `normal-${size}.db`), durability: 'normal' }),
  ],
];

console.log(`mcp-tasks store benchmark — ops/s (${OWNERS} owners, list page = ${PAGE} tasks)\n`);
console.log('store                        tasks    create    update       get  list page');
const ratios: string[] = [];
try {
  for (const [name, factory] of stores) {
    const small = await measure(factory(1000), 1000);
    const large = await measure(factory(100_000), 100_000);
    for (const [size, f] of [
      ['1k', small],
      ['100k', large],
    ] as const) {
      console.log(
        `${name.padEnd(26)} ${size.padStart(6)} ${fmt(f.create).padStart(9)} ${fmt(f.update).padStart(9)} ${fmt(f.get).padStart(9)} ${fmt(f.list).padStart(10)}`,
      );
    }
    ratios.push(
      `${name.padEnd(26)} get ${fmt(large.get / small.get, 2)}   list page ${fmt(large.list / small.list, 2)}`,
    );
  }
  console.log('\nratio 100k/1k (goal >= 0.80):');
  for (const line of ratios) console.log(line);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
