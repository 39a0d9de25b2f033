// npm run bench:store — store throughput with 1k and with many tasks stored, and the ratios (goal >= 0.8): SQLite
// (durability full) with STORE_LARGE tasks (default 1,000,000), SQLite (durability normal) and memory with 100,000
// (or STORE_LARGE if fewer).
// Stores are filled through their own insert, STORE_FILL_BATCH (default 5,000) concurrent inserts at a time: on SQLite
// those share group commits (1,000 inserts per transaction); a million took 2 to 4 minutes (18 at load 14) on a 2-core
// machine. Each store is then read once in full before it is measured (see readAll). `get` draws from every stored
// task, so with many stored it also measures the memory hierarchy (a random page of a 1 GB file; the memory store's
// ratio shows the same effect); `get (new)` draws from the 1,000 newest, the same working set in both stores.
// SQLite runs without its record cache (`recordCacheEntries: 0`): these figures are the file's; the cache, on by
// default, answers repeated reads of recently used tasks from memory and would hide how the file scales.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import type { TaskRecord, TaskStore } from '../src/engine/index.js';
import { MemoryStore } from '../src/stores/memory/index.js';
import { SqliteStore } from '../src/stores/sqlite/index.js';
import { benchRecord } from './benchRecord.js';
import { fmt, opsPerSecond, percentile } from './measure.js';

const OWNERS = 10;
const PAGE = 50;
const LARGE = Number(process.env['STORE_LARGE'] ?? 1_000_000);
const FILL_BATCH = Number(process.env['STORE_FILL_BATCH'] ?? 5000);

function record(i: number, now: number): TaskRecord {
  return benchRecord(i, now, OWNERS);
}

interface Figures {
  create: number;
  update: number;
  get: number;
  /** A get of one of the 1,000 newest tasks, as the pollers of running tasks read. */
  getNew: number;
  list: number;
}

/** Inserts `size` tasks, FILL_BATCH at once; returns their ids and the seconds it took. */
async function fill(store: TaskStore, size: number, now: number): Promise<{ ids: string[]; seconds: number }> {
  const started = performance.now();
  const ids: string[] = [];
  for (let from = 0; from < size; from += FILL_BATCH) {
    const batch: Array<Promise<unknown>> = [];
    for (let i = from; i < Math.min(size, from + FILL_BATCH); i++) {
      const r = record(i, now);
      ids.push(r.taskId);
      batch.push(store.insert(r));
    }
    await Promise.all(batch);
  }
  return { ids, seconds: (performance.now() - started) / 1000 };
}

/**
 * Reads every stored task once, as a server that has run for a while has: the caches (SQLite's page cache, the memory
 * map's page table) are then in their steady state, bounded by their sizes, as the 1k store's are after its fill.
 * Otherwise the large store's figures would mostly count first reads of pages. Returns the seconds it took.
 */
async function readAll(store: TaskStore, ids: string[]): Promise<number> {
  const started = performance.now();
  for (const id of ids) await store.get(id);
  return (performance.now() - started) / 1000;
}

interface Filled {
  store: TaskStore;
  ids: string[];
  now: number;
  /** The index of the next task created. */
  next: number;
}

async function filled(makeStore: () => TaskStore, size: number): Promise<Filled> {
  const store = makeStore();
  await store.init();
  const now = Date.now();
  const { ids, seconds } = await fill(store, size, now);
  const warmed = await readAll(store, ids);
  if (size > 1000) {
    console.log(
      `  (${fmt(size)} tasks stored in ${fmt(seconds, 1)} s, each then read once in ${fmt(warmed, 1)} s: ${fmt(size / warmed)} gets/s)`,
    );
  }
  return { store, ids, now, next: size };
}

const OPERATIONS: Array<[keyof Figures, (f: Filled, i: number) => Promise<unknown>]> = [
  ['create', (f) => f.store.insert(record(f.next++, f.now))],
  [
    'update',
    async ({ store, ids }, i) => {
      const current = (await store.get(ids[(i * 7919) % ids.length] as string)) as TaskRecord;
      await store.replace({ ...current, statusMessage: `step ${i}`, version: current.version + 1 }, current.version);
    },
  ],
  ['get', ({ store, ids }, i) => store.get(ids[(i * 104_729) % ids.length] as string)],
  [
    'getNew',
    ({ store, ids }, i) => store.get(ids[ids.length - 1 - ((i * 7919) % Math.min(1000, ids.length))] as string),
  ],
  [
    // A first page and the next one.
    'list',
    async ({ store, now }, i) => {
      const page = await store.list(`owner-${i % OWNERS}`, { limit: PAGE, now });
      const last = page[page.length - 1] as TaskRecord;
      await store.list(`owner-${i % OWNERS}`, {
        limit: PAGE,
        now,
        after: { createdAt: last.createdAt, taskId: last.taskId },
      });
    },
  ],
];

/**
 * The figures of both stores, measured in alternation (3 rounds of 0.7 s each, the median kept): a neighbour's burst
 * on a shared machine then weighs on both sides of a ratio alike.
 */
async function measurePair(small: Filled, large: Filled): Promise<[Figures, Figures]> {
  const figures: [Figures, Figures] = [
    { create: 0, update: 0, get: 0, getNew: 0, list: 0 },
    { create: 0, update: 0, get: 0, getNew: 0, list: 0 },
  ];
  for (const [name, op] of OPERATIONS) {
    const runs: [number[], number[]] = [[], []];
    for (let round = 0; round < 3; round++) {
      runs[0].push(await opsPerSecond((i) => op(small, i), 700));
      runs[1].push(await opsPerSecond((i) => op(large, i), 700));
    }
    // A list op reads two pages.
    const pages = name === 'list' ? 2 : 1;
    figures[0][name] = percentile(runs[0], 50) * pages;
    figures[1][name] = percentile(runs[1], 50) * pages;
  }
  return figures;
}

const dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-bench-'));
const stores: Array<[string, number, (size: number) => () => TaskStore]> = [
  ['memory', Math.min(100_000, LARGE), () => () => new MemoryStore()],
  [
    'sqlite (durability full)',
    LARGE,
    (size) => () => new SqliteStore({ path: join(dir, `full-${size}.db`), recordCacheEntries: 0 }),
  ],
  [
    'sqlite (durability normal)',
    Math.min(100_000, LARGE),
    (size) => () =>
      new SqliteStore({ path: join(dir, `normal-${size}.db`), durability: 'normal', recordCacheEntries: 0 }),
  ],
];

const size = (n: number) => (n >= 1_000_000 ? `${fmt(n / 1_000_000)}M` : `${fmt(n / 1000)}k`);
console.log(
  `mcp-tasks store benchmark — ops/s (${OWNERS} owners, list page = ${PAGE} tasks; list page = a first and a next page)\n`,
);
console.log('store                        tasks    create    update       get  get (new)  list page');
const ratios: string[] = [];
try {
  for (const [name, large, factory] of stores) {
    const smallStore = await filled(factory(1000), 1000);
    const largeStore = await filled(factory(large), large);
    const [small, many] = await measurePair(smallStore, largeStore);
    await smallStore.store.close();
    await largeStore.store.close();
    for (const [label, f] of [
      ['1k', small],
      [size(large), many],
    ] as const) {
      console.log(
        `${name.padEnd(26)} ${label.padStart(6)} ${fmt(f.create).padStart(9)} ${fmt(f.update).padStart(9)} ${fmt(f.get).padStart(9)} ${fmt(f.getNew).padStart(10)} ${fmt(f.list).padStart(10)}`,
      );
    }
    ratios.push(
      `${name.padEnd(26)} ${size(large).padStart(4)}/1k   get ${fmt(many.get / small.get, 2)}   get (new) ${fmt(many.getNew / small.getNew, 2)}   list page ${fmt(many.list / small.list, 2)}`,
    );
  }
  console.log(
    `\nratios, many stored against 1k stored (goal >= 0.80):  (load ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')})`,
  );
  for (const line of ratios) console.log(line);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
