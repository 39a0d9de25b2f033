import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { TaskBrowseStore, TaskRecord, TaskStore } from '../../src/engine/index.js';
import { makeRecord } from '../helpers/records.js';
import type { EachStoreHarness } from './eachStore.js';

const browseOf = (store: TaskStore): TaskBrowseStore => {
  if (!store.browse) throw new Error(`${store.kind} has no browse view`);
  return store.browse;
};

/** The operators' reads every store passes unchanged (memory, SQLite, PostgreSQL, Redis). */
export function browseContract(name: string, harness: EachStoreHarness): void {
  describe(`task browse contract: ${name}`, () => {
    let store: TaskStore;
    const opened: TaskStore[] = [];
    const base = Date.now();
    let records: TaskRecord[];
    beforeEach(async () => {
      store = await harness.create();
      opened.push(store);
      // Ten tasks, one per millisecond, across two owners; the odd ones completed.
      records = [];
      for (let i = 0; i < 10; i++) {
        const record = makeRecord({ owner: i % 2 === 0 ? 'owner-a' : 'owner-b', createdAt: base + i });
        await store.insert(record);
        if (i % 2 === 1) {
          const done = { ...record, status: 'completed' as const, version: 2 };
          expect(await store.replace(done, 1)).toBe(true);
          records.push(done);
        } else records.push(record);
      }
    });
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });
    const ids = (list: TaskRecord[]) => list.map((record) => record.taskId);
    const newestFirst = () => [...records].reverse();

    it('pages every owner newest first with a keyset position', async () => {
      const browse = browseOf(store);
      const first = await browse.page({}, { limit: 4, now: base });
      expect(ids(first)).toEqual(ids(newestFirst().slice(0, 4)));
      const last = first[3] as TaskRecord;
      const next = await browse.page({}, { limit: 10, now: base, after: last });
      expect(ids(next)).toEqual(ids(newestFirst().slice(4)));
      expect(next[0]).toEqual(newestFirst()[4]);
    });

    it('filters by tool and generation where it declares indexes for them, replaced records included', async () => {
      const browse = browseOf(store);
      if (!browse.indexedFilters?.length) return;
      const extra: TaskRecord[] = [];
      for (let i = 10; i < 16; i++) {
        const record = makeRecord({
          createdAt: base + i,
          dialect: i % 2 === 0 ? 'sep-1686' : 'test',
          request: { method: 'tools/call', params: { name: i % 3 === 0 ? 'render' : 'echo', arguments: {} } },
        });
        await store.insert(record);
        extra.push(record);
      }
      // A replace keeps the indexed columns: they are set once at insert.
      const renamed = { ...(extra[2] as TaskRecord), status: 'completed' as const, version: 2 };
      expect(await store.replace(renamed, 1)).toBe(true);
      extra[2] = renamed;
      const all = [...records, ...extra].reverse();
      const render = await browse.page({ tool: 'render' }, { limit: 50, now: base });
      expect(ids(render)).toEqual(ids(all.filter((r) => r.request.params['name'] === 'render')));
      const sep = await browse.page({ dialect: 'sep-1686' }, { limit: 50, now: base });
      expect(ids(sep)).toEqual(ids(all.filter((r) => r.dialect === 'sep-1686')));
      const both = await browse.page(
        { tool: 'render', dialect: 'sep-1686', status: 'completed' },
        { limit: 50, now: base },
      );
      expect(ids(both)).toEqual([renamed.taskId]);
    });

    it('searches text on a budget of tasks, and says where the search goes on', async () => {
      const browse = browseOf(store);
      if (!browse.searchText) return;
      // Newest first: records 9..0; the arguments of 8, 6 and 1 hold the text, in mixed case.
      for (const [i, text] of [
        [8, 'Needle-A'],
        [6, 'a needle'],
        [1, 'NEEDLE'],
      ] as const) {
        const record = records[i] as TaskRecord;
        const changed: TaskRecord = {
          ...record,
          request: { method: 'tools/call', params: { name: 'echo', arguments: { text } } },
          version: record.version + 1,
        };
        await store.delete(record.taskId);
        await store.insert({ ...changed, version: 1 });
        records[i] = { ...changed, version: 1 };
      }
      const budgeted = await browse.searchText({}, 'needle', { limit: 50, budget: 4, now: base });
      expect(ids(budgeted.records)).toEqual(ids([records[8], records[6]] as TaskRecord[]));
      expect(budgeted.scanned).toBe(4);
      // The budget ran out at record 6 (the fourth newest): the search goes on from there.
      expect(budgeted.next).toEqual({ createdAt: base + 6, taskId: (records[6] as TaskRecord).taskId });
      const rest = await browse.searchText({}, 'needle', { limit: 50, budget: 100, now: base, after: budgeted.next });
      expect(ids(rest.records)).toEqual([(records[1] as TaskRecord).taskId]);
      expect(rest.next).toBeUndefined();
      const full = await browse.searchText({}, 'needle', { limit: 1, budget: 100, now: base });
      expect(ids(full.records)).toEqual([(records[8] as TaskRecord).taskId]);
      expect(full.next).toEqual({ createdAt: base + 8, taskId: (records[8] as TaskRecord).taskId });
      const byId = await browse.searchText({ owner: 'owner-b' }, (records[3] as TaskRecord).taskId.slice(0, 8), {
        limit: 50,
        budget: 100,
        now: base,
      });
      expect(ids(byId.records)).toEqual([(records[3] as TaskRecord).taskId]);
    });

    it('filters by status, owner and creation range on its indexes', async () => {
      const browse = browseOf(store);
      const completed = await browse.page({ status: 'completed' }, { limit: 50, now: base });
      expect(ids(completed)).toEqual(ids(newestFirst().filter((r) => r.status === 'completed')));
      const ownerA = await browse.page({ owner: 'owner-a' }, { limit: 50, now: base });
      expect(ids(ownerA)).toEqual(ids(newestFirst().filter((r) => r.owner === 'owner-a')));
      const both = await browse.page({ owner: 'owner-b', status: 'working' }, { limit: 50, now: base });
      expect(both).toEqual([]);
      const range = await browse.page({ createdFrom: base + 3, createdTo: base + 7 }, { limit: 50, now: base });
      expect(ids(range)).toEqual(ids(newestFirst().filter((r) => r.createdAt >= base + 3 && r.createdAt < base + 7)));
      const pageTwo = await browse.page(
        { status: 'working', createdTo: base + 9 },
        { limit: 2, now: base, after: records[6] as TaskRecord },
      );
      expect(ids(pageTwo)).toEqual(ids([records[4], records[2]] as TaskRecord[]));
    });

    it('hides expired tasks and forgets deleted ones', async () => {
      const browse = browseOf(store);
      const expiresAt = (records[9] as TaskRecord).expiresAt as number;
      const later = await browse.page({}, { limit: 50, now: expiresAt + 1 });
      expect(later).toEqual([]);
      await store.delete((records[9] as TaskRecord).taskId);
      const page = await browse.page({}, { limit: 1, now: base });
      expect(ids(page)).toEqual([(records[8] as TaskRecord).taskId]);
    });

    it('counts tasks by status as they change', async () => {
      const browse = browseOf(store);
      expect(await browse.counts()).toEqual({ working: 5, completed: 5 });
      const task = records[0] as TaskRecord;
      expect(await store.replace({ ...task, status: 'cancelled', version: 2 }, 1)).toBe(true);
      await store.delete((records[1] as TaskRecord).taskId);
      expect(await browse.counts()).toEqual({ working: 4, completed: 4, cancelled: 1 });
    });
  });
}
