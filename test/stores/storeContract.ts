import { describe, expect, it } from 'vitest';

import type { TaskChange, TaskRecord, TaskStore } from '../../src/engine/index.js';
import { storePerTest } from './eachStore.js';
import { makeRecord } from '../helpers/records.js';

export interface StoreHarness {
  /** A fresh, empty, initialised store. */
  create(): Promise<TaskStore>;
  /** A second store instance on the same backend as `store` (another process would see the same), if supported. */
  sibling?(store: TaskStore): Promise<TaskStore>;
  /** A publish on one instance reaches the sibling's subscribers, with its change (a cross-process bus). */
  carriesEvents?: boolean;
}

/** The contract every TaskStore passes unchanged (memory, SQLite, PostgreSQL, Redis). */
export function storeContract(name: string, harness: StoreHarness): void {
  describe(`TaskStore contract: ${name}`, () => {
    let store: TaskStore;
    const opened = storePerTest(harness, (fresh) => (store = fresh));

    it('round-trips a record exactly', async () => {
      const record = makeRecord({
        statusMessage: 'hello',
        pollIntervalMs: 500,
        progressToken: 'tok-1',
        idempotencyKey: 'key-1',
        outcome: { kind: 'error', error: { code: -32000, message: 'boom', data: { nested: [1, 'two', null] } } },
        inputRequests: { 'input-1': { method: 'elicitation/create', params: { message: 'Name?' }, createdAt: 5 } },
        offers: {
          stop: {
            method: 'elicitation/create',
            createdAt: 6,
            answered: true,
            answer: { result: { action: 'accept' } },
          },
          more: { method: 'elicitation/create', params: { message: 'More?' }, createdAt: 7 },
        },
        meta: { sessionId: 's1', unicode: 'ünïcødé ✓' },
        runner: 'r1',
        leaseUntil: Date.now() + 1000,
      });
      expect(await store.insert(record)).toEqual({ inserted: true });
      expect(await store.get(record.taskId)).toEqual(record);
    });

    it('returns undefined for a missing task and false when deleting it', async () => {
      expect(await store.get('missing')).toBeUndefined();
      expect(await store.delete('missing')).toBe(false);
    });

    it('never lets a returned record change the stored one (a copy, or frozen)', async () => {
      const record = makeRecord();
      await store.insert(record);
      const returned = (await store.get(record.taskId)) as TaskRecord;
      try {
        returned.status = 'failed';
        returned.meta['x'] = 1;
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
      }
      record.meta['y'] = 2; // nor does changing the inserted object afterwards
      expect(await store.get(record.taskId)).toEqual({ ...record, meta: {} });
    });

    it('answers many concurrent reads, of one task and of several, each with its own record', async () => {
      const records = [makeRecord(), makeRecord(), makeRecord()];
      for (const record of records) await store.insert(record);
      const ids = [...records.map((r) => r.taskId), 'missing', ...records.map((r) => r.taskId)];
      const reads = await Promise.all([...ids, ...ids].map((taskId) => store.get(taskId)));
      expect(reads.map((record) => record?.taskId)).toEqual(
        [...ids, ...ids].map((id) => (id === 'missing' ? undefined : id)),
      );
    });

    it('refuses a duplicate task id', async () => {
      const record = makeRecord();
      await store.insert(record);
      expect(await store.insert({ ...record, owner: 'other' })).toEqual({ inserted: false, reason: 'duplicate_id' });
    });

    it('keeps idempotency keys unique per owner and reports the holder', async () => {
      const first = makeRecord({ idempotencyKey: 'k' });
      await store.insert(first);
      const second = makeRecord({ idempotencyKey: 'k' });
      const result = await store.insert(second);
      expect(result).toEqual({ inserted: false, reason: 'duplicate_key', existing: first });
      expect(await store.get(second.taskId)).toBeUndefined();
      // The same key under another owner is a different key.
      expect(await store.insert(makeRecord({ idempotencyKey: 'k', owner: 'owner-b' }))).toEqual({ inserted: true });
      expect((await store.getByIdempotencyKey('owner-a', 'k'))?.taskId).toBe(first.taskId);
      expect(await store.getByIdempotencyKey('owner-c', 'k')).toBeUndefined();
    });

    it('frees an idempotency key when its task is deleted', async () => {
      const first = makeRecord({ idempotencyKey: 'k' });
      await store.insert(first);
      await store.delete(first.taskId);
      expect(await store.getByIdempotencyKey('owner-a', 'k')).toBeUndefined();
      expect(await store.insert(makeRecord({ idempotencyKey: 'k' }))).toEqual({ inserted: true });
    });

    it('replaces only at the expected version (compare-and-set)', async () => {
      const record = makeRecord();
      await store.insert(record);
      const next = { ...record, status: 'completed' as const, version: 2 };
      expect(await store.replace(next, 1)).toBe(true);
      expect(await store.replace({ ...record, status: 'cancelled', version: 2 }, 1)).toBe(false);
      expect((await store.get(record.taskId))?.status).toBe('completed');
      expect(await store.replace({ ...record, version: 2 }, 1)).toBe(false);
      expect(await store.replace({ ...makeRecord(), version: 2 }, 1)).toBe(false);
    });

    it('keeps a lease renewed between a read and a compare-and-set write by the same runner', async () => {
      const now = Date.now();
      const record = makeRecord({ runner: 'r1', leaseUntil: now + 1000 });
      await store.insert(record);
      const read = (await store.get(record.taskId)) as TaskRecord;
      await store.renewLeases('r1', now + 5000);
      expect(await store.replace({ ...read, statusMessage: 'halfway', version: 2 }, 1)).toBe(true);
      const renewed = (await store.get(record.taskId)) as TaskRecord;
      expect(renewed.leaseUntil).toBe(now + 5000);
      expect(renewed.statusMessage).toBe('halfway');
      // Another runner's claim brings its own lease; ending the task drops it.
      expect(await store.replace({ ...renewed, runner: 'r2', leaseUntil: now + 3000, version: 3 }, 2)).toBe(true);
      expect((await store.get(record.taskId))?.leaseUntil).toBe(now + 3000);
      const { runner: _runner, leaseUntil: _lease, ...ended } = renewed;
      expect(await store.replace({ ...ended, status: 'completed', version: 4 }, 3)).toBe(true);
      expect((await store.get(record.taskId))?.leaseUntil).toBeUndefined();
    });

    it('given the record it replaces, writes what changed: indexed reads follow, a renewed lease stays', async () => {
      // A store that writes with `along` may keep the timeline beside the write.
      await store.timeline?.init();
      const now = Date.now();
      const record = makeRecord({ owner: 'prev-owner', runner: 'r1', leaseUntil: now + 1000, expiresAt: now + 60_000 });
      await store.insert(record);
      await store.renewLeases('r1', now + 5000);
      const change = (next: TaskRecord): TaskChange => ({ version: next.version, status: next.status });
      // Nothing indexed changes: the lease renewed since the writer's read is kept.
      const moved = { ...record, statusMessage: 'halfway', version: 2 };
      expect(await store.replace(moved, 1, { change: change(moved), previous: record })).toBe(true);
      expect(await store.get(record.taskId)).toMatchObject({ statusMessage: 'halfway', leaseUntil: now + 5000 });
      expect(await store.countActive('prev-owner')).toBe(1);
      // Another runner claims it: its runner and lease are written.
      const claimed = { ...moved, runner: 'r2', leaseUntil: now + 2000, version: 3 };
      expect(await store.replace(claimed, 2, { change: change(claimed), previous: moved })).toBe(true);
      expect(await store.get(record.taskId)).toMatchObject({ runner: 'r2', leaseUntil: now + 2000 });
      expect((await store.findStale(now + 3000, 10)).map((t) => t.taskId)).toEqual([record.taskId]);
      // It ends: status, lease and expiry are written, and every read over them follows.
      const { runner: _runner, leaseUntil: _lease, ...rest } = claimed;
      const ended: TaskRecord = { ...rest, status: 'completed', expiresAt: now - 1, version: 4 };
      expect(await store.replace(ended, 3, { change: change(ended), previous: claimed })).toBe(true);
      expect(await store.countActive('prev-owner')).toBe(0);
      expect(await store.findStale(now + 3000, 10)).toEqual([]);
      expect((await store.sweepExpired(now, 10)).map((t) => t.taskId)).toEqual([record.taskId]);
    });

    it('lets exactly one of many concurrent writers win a compare-and-set', async () => {
      const record = makeRecord();
      await store.insert(record);
      const statuses = ['completed', 'failed', 'cancelled'] as const;
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          store.replace({ ...record, status: statuses[i % 3] as TaskRecord['status'], version: 2 }, 1),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = statuses[results.indexOf(true) % 3];
      expect((await store.get(record.taskId))?.status).toBe(winner);
    });

    it('gives each of many concurrent writes to distinct tasks its own outcome, failures included', async () => {
      const stored = Array.from({ length: 10 }, () => makeRecord());
      for (const record of stored) await store.insert(record);
      // Creations issued together (one group commit where the store has one): duplicates fail alone.
      const fresh = Array.from({ length: 10 }, () => makeRecord());
      const inserted = await Promise.all([
        ...fresh.map((record) => store.insert(record)),
        ...stored.slice(0, 5).map((record) => store.insert(record)),
      ]);
      expect(inserted.slice(0, 10).every((r) => r.inserted)).toBe(true);
      expect(inserted.slice(10).map((r) => !r.inserted && r.reason)).toEqual(Array(5).fill('duplicate_id'));
      // Compare-and-sets issued together: the stale ones fail alone, the others all land.
      const replaced = await Promise.all(
        stored.map((record, i) => store.replace({ ...record, status: 'completed', version: 2 }, i % 2 === 0 ? 1 : 7)),
      );
      expect(replaced).toEqual(stored.map((_, i) => i % 2 === 0));
      for (const [i, record] of stored.entries()) {
        expect((await store.get(record.taskId))?.status).toBe(i % 2 === 0 ? 'completed' : record.status);
      }
      for (const record of fresh) expect((await store.get(record.taskId))?.taskId).toBe(record.taskId);
    });

    it('lists one owner only, newest first, with keyset pages that neither skip nor repeat', async () => {
      const base = 1_700_000_000_000;
      const mine: TaskRecord[] = [];
      for (let i = 0; i < 23; i++) {
        // Groups of equal createdAt exercise the task-id tie-break.
        const record = makeRecord({ createdAt: base + Math.floor(i / 4), expiresAt: null });
        mine.push(record);
        await store.insert(record);
        await store.insert(makeRecord({ owner: 'owner-b', createdAt: base + i, expiresAt: null }));
      }
      const expected = [...mine]
        .sort((a, b) => b.createdAt - a.createdAt || (a.taskId < b.taskId ? 1 : -1))
        .map((r) => r.taskId);
      const seen: string[] = [];
      let after: { createdAt: number; taskId: string } | undefined;
      for (;;) {
        const page = await store.list('owner-a', { limit: 5, now: base, ...(after && { after }) });
        seen.push(...page.map((r) => r.taskId));
        if (page.length < 5) break;
        const last = page[page.length - 1] as TaskRecord;
        after = { createdAt: last.createdAt, taskId: last.taskId };
      }
      expect(seen).toEqual(expected);
      expect(await store.list('nobody', { limit: 5, now: base })).toEqual([]);
    });

    it('leaves expired tasks out of lists', async () => {
      const now = Date.now();
      const live = makeRecord({ expiresAt: now + 10_000 });
      const dead = makeRecord({ expiresAt: now - 1 });
      const forever = makeRecord({ expiresAt: null });
      for (const r of [live, dead, forever]) await store.insert(r);
      const listed = (await store.list('owner-a', { limit: 10, now })).map((r) => r.taskId).sort();
      expect(listed).toEqual([live.taskId, forever.taskId].sort());
    });

    it('counts only the owner’s non-terminal tasks', async () => {
      await store.insert(makeRecord());
      await store.insert(makeRecord({ status: 'input_required' }));
      await store.insert(makeRecord({ status: 'completed' }));
      await store.insert(makeRecord({ owner: 'owner-b' }));
      const task = makeRecord();
      await store.insert(task);
      expect(await store.countActive('owner-a')).toBe(3);
      await store.replace({ ...task, status: 'cancelled', version: 2 }, 1);
      expect(await store.countActive('owner-a')).toBe(2);
    });

    it('refuses an insert past the owner’s active cap; a terminal transition or a deletion frees a slot', async () => {
      const limits = { maxActive: 2 };
      const first = makeRecord();
      const second = makeRecord();
      expect(await store.insert(first, limits)).toEqual({ inserted: true });
      expect(await store.insert(second, limits)).toEqual({ inserted: true });
      const third = makeRecord();
      expect(await store.insert(third, limits)).toEqual({ inserted: false, reason: 'limit', limit: 'active' });
      expect(await store.get(third.taskId)).toBeUndefined();
      // Another owner has slots of its own.
      expect(await store.insert(makeRecord({ owner: 'owner-b' }), limits)).toEqual({ inserted: true });
      await store.replace({ ...first, status: 'completed', version: 2 }, 1);
      expect(await store.insert(third, limits)).toEqual({ inserted: true });
      expect(await store.insert(makeRecord(), limits)).toMatchObject({ reason: 'limit', limit: 'active' });
      await store.delete(second.taskId);
      expect(await store.insert(makeRecord(), limits)).toEqual({ inserted: true });
    });

    it('counts finished tasks against the owner’s stored cap until they are deleted or swept', async () => {
      const now = Date.now();
      const limits = { maxActive: 10, maxStored: 3 };
      const done = makeRecord({ status: 'completed' });
      const expired = makeRecord({ status: 'failed', expiresAt: now - 1 });
      for (const r of [done, expired, makeRecord()]) expect(await store.insert(r, limits)).toEqual({ inserted: true });
      expect(await store.insert(makeRecord(), limits)).toEqual({ inserted: false, reason: 'limit', limit: 'stored' });
      expect(await store.insert(makeRecord({ owner: 'owner-b' }), limits)).toEqual({ inserted: true });
      await store.delete(done.taskId);
      expect(await store.insert(makeRecord(), limits)).toEqual({ inserted: true });
      expect(await store.insert(makeRecord(), limits)).toMatchObject({ reason: 'limit', limit: 'stored' });
      expect((await store.sweepExpired(now, 10)).map((r) => r.taskId)).toEqual([expired.taskId]);
      expect(await store.insert(makeRecord(), limits)).toEqual({ inserted: true });
    });

    it('reports the holder of an idempotency key rather than a cap', async () => {
      const held = makeRecord({ idempotencyKey: 'again' });
      expect(await store.insert(held, { maxActive: 1 })).toEqual({ inserted: true });
      const retry = makeRecord({ idempotencyKey: 'again' });
      expect(await store.insert(retry, { maxActive: 1, maxStored: 1 })).toEqual({
        inserted: false,
        reason: 'duplicate_key',
        existing: held,
      });
    });

    it('keeps the owner caps exact among concurrent inserts through two instances', async () => {
      const sibling = harness.sibling ? await harness.sibling(store) : store;
      if (sibling !== store) opened.push(sibling);
      const limits = { maxActive: 7, maxStored: 9 };
      await store.insert(makeRecord({ status: 'completed' }), limits);
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? store : sibling).insert(makeRecord(), limits)),
      );
      expect(results.filter((r) => r.inserted)).toHaveLength(7);
      expect(results.filter((r) => !r.inserted && r.reason === 'limit')).toHaveLength(33);
      expect(await sibling.countActive('owner-a')).toBe(7);
      const more = await Promise.all(
        Array.from({ length: 10 }, () => store.insert(makeRecord({ status: 'completed' }), { maxStored: 9 })),
      );
      expect(more.filter((r) => r.inserted)).toHaveLength(1);
    });

    it('sweeps expired tasks in bounded batches and leaves the rest', async () => {
      const now = Date.now();
      const expired = Array.from({ length: 7 }, (_, i) => makeRecord({ expiresAt: now - 1000 + i }));
      const kept = [makeRecord({ expiresAt: now + 60_000 }), makeRecord({ expiresAt: null })];
      for (const r of [...expired, ...kept]) await store.insert(r);
      const first = await store.sweepExpired(now, 5);
      const second = await store.sweepExpired(now, 5);
      expect(first).toHaveLength(5);
      expect(second).toHaveLength(2);
      expect([...first, ...second].map((r) => r.taskId).sort()).toEqual(expired.map((r) => r.taskId).sort());
      expect(await store.sweepExpired(now, 5)).toEqual([]);
      for (const r of expired) expect(await store.get(r.taskId)).toBeUndefined();
      for (const r of kept) expect(await store.get(r.taskId)).toBeDefined();
    });

    it('sweeps a task by its current expiry, not an earlier one', async () => {
      const now = Date.now();
      const record = makeRecord({ expiresAt: now - 10 });
      await store.insert(record);
      await store.replace({ ...record, expiresAt: now + 60_000, version: 2 }, 1);
      expect(await store.sweepExpired(now, 10)).toEqual([]);
      expect(await store.get(record.taskId)).toBeDefined();
    });

    it('finds non-terminal tasks whose lease ran out, and renews leases per runner', async () => {
      const now = Date.now();
      const stale = makeRecord({ runner: 'dead', leaseUntil: now - 1 });
      const fresh = makeRecord({ runner: 'alive', leaseUntil: now + 10_000 });
      const done = makeRecord({ runner: 'dead', leaseUntil: now - 1, status: 'completed' });
      const unleased = makeRecord();
      for (const r of [stale, fresh, done, unleased]) await store.insert(r);
      expect((await store.findStale(now, 10)).map((r) => r.taskId)).toEqual([stale.taskId]);
      await store.renewLeases('dead', now + 5000);
      expect(await store.findStale(now, 10)).toEqual([]);
      expect((await store.get(stale.taskId))?.leaseUntil).toBe(now + 5000);
      expect((await store.get(done.taskId))?.leaseUntil).toBe(now - 1);
    });

    it('keeps one secret per backend', async () => {
      const secret = await store.getSecret();
      expect(secret.byteLength).toBeGreaterThanOrEqual(32);
      expect(Buffer.from(await store.getSecret()).equals(Buffer.from(secret))).toBe(true);
      if (harness.sibling) {
        const sibling = await harness.sibling(store);
        opened.push(sibling);
        expect(Buffer.from(await sibling.getSecret()).equals(Buffer.from(secret))).toBe(true);
      }
    });

    it('shares tasks with a sibling instance on the same backend', async () => {
      if (!harness.sibling) return;
      const sibling = await harness.sibling(store);
      opened.push(sibling);
      const record = makeRecord();
      await store.insert(record);
      expect(await sibling.get(record.taskId)).toEqual(record);
      expect(await sibling.replace({ ...record, status: 'completed', version: 2 }, 1)).toBe(true);
      expect((await store.get(record.taskId))?.status).toBe('completed');
    });

    it('delivers events to subscribers of that task only', async () => {
      const calls: string[] = [];
      const off = store.events.subscribe('t1', () => calls.push('t1'));
      const offOther = store.events.subscribe('t2', () => calls.push('t2'));
      await store.events.publish('t1');
      await waitUntil(() => calls.includes('t1'));
      off();
      await store.events.publish('t1');
      await store.events.publish('t2');
      await waitUntil(() => calls.includes('t2'));
      offOther();
      expect(calls.filter((c) => c === 't1')).toHaveLength(1);
    });

    it('hands a published change to the task’s subscribers, and a bare wake when there is none', async () => {
      const seen: Array<TaskChange | undefined> = [];
      const off = store.events.subscribe('t3', (change) => seen.push(change));
      await store.events.publish('t3', { version: 7, status: 'completed' });
      await store.events.publish('t3');
      await waitUntil(() => seen.length === 2);
      off();
      expect(seen).toEqual([{ version: 7, status: 'completed' }, undefined]);
    });

    it('with `along`, appends a write’s timeline entries and publishes its change; a lost race does neither', async () => {
      if (!store.replacesAlong) return;
      await store.timeline?.init();
      // The sibling where the bus carries changes across processes; a bus that only wakes them is heard in-process.
      const listener = harness.sibling && harness.carriesEvents ? await harness.sibling(store) : store;
      if (listener !== store) opened.push(listener);
      const records = Array.from({ length: 5 }, () => makeRecord());
      for (const record of records) await store.insert(record);
      const seen = new Map<string, Array<TaskChange | undefined>>();
      for (const { taskId } of records)
        listener.events.subscribe(taskId, (change) => seen.set(taskId, [...(seen.get(taskId) ?? []), change]));
      const entry = (at: number) => ({
        at,
        kind: 'status' as const,
        from: 'working' as const,
        status: 'completed' as const,
      });
      const done = (record: TaskRecord) => ({ ...record, status: 'completed' as const, version: 2 });
      const change = { version: 2, status: 'completed' as const };
      // Concurrent writes of distinct tasks (a batch where the store makes them one), each with two entries.
      const won = await Promise.all(
        records.map((record, i) =>
          store.replace(done(record), 1, { change, timeline: { entries: [entry(i), entry(i + 100)], maxEntries: 10 } }),
        ),
      );
      expect(won).toEqual(records.map(() => true));
      await waitUntil(() => records.every(({ taskId }) => seen.get(taskId)?.length === 1));
      for (const [i, { taskId }] of records.entries()) {
        expect(seen.get(taskId)).toEqual([change]);
        expect(await store.timeline?.read(taskId)).toEqual([entry(i), entry(i + 100)]);
      }
      // The bound: the first entry and the newest maxEntries - 1 stay.
      const [first] = records as [TaskRecord];
      const many = Array.from({ length: 6 }, (_, i) => entry(200 + i));
      expect(
        await store.replace({ ...done(first), version: 3 }, 2, {
          change: { version: 3, status: 'completed' },
          timeline: { entries: many, maxEntries: 3 },
        }),
      ).toBe(true);
      expect(await store.timeline?.read(first.taskId)).toEqual([entry(0), entry(204), entry(205)]);
      // A stale version: no write, no entry, no event (a later marker event proves the bus is flowing).
      expect(
        await store.replace({ ...done(first), version: 9 }, 1, {
          change: { version: 9, status: 'failed' },
          timeline: { entries: [entry(999)], maxEntries: 10 },
        }),
      ).toBe(false);
      let marker = false;
      listener.events.subscribe('marker', () => (marker = true));
      await store.events.publish('marker');
      await waitUntil(() => marker);
      expect(seen.get(first.taskId)).toEqual([change, { version: 3, status: 'completed' }]);
      expect(await store.timeline?.read(first.taskId)).toEqual([entry(0), entry(204), entry(205)]);
      expect((await store.get(first.taskId))?.version).toBe(3);
    });

    it('with `along`, an insert appends the new task’s timeline entries; a refused insert does not', async () => {
      if (!store.insertsAlong) return;
      await store.timeline?.init();
      const entry = (at: number) => ({ at, kind: 'status' as const, status: 'working' as const });
      const owner = `along-${Date.now()}`;
      const records = Array.from({ length: 4 }, () => makeRecord({ owner }));
      // Concurrent inserts (one batch where the store makes them one), each with its own entries.
      const results = await Promise.all(
        records.map((record, i) =>
          store.insert(record, {}, { timeline: { entries: [entry(i), entry(i + 10)], maxEntries: 10 } }),
        ),
      );
      expect(results).toEqual(records.map(() => ({ inserted: true })));
      for (const [i, { taskId }] of records.entries())
        expect(await store.timeline?.read(taskId)).toEqual([entry(i), entry(i + 10)]);
      // The bound holds from the first write: the first entry and the newest ones.
      const bounded = makeRecord({ owner: `${owner}-bounded` });
      const five = [1, 2, 3, 4, 5].map(entry);
      expect(await store.insert(bounded, {}, { timeline: { entries: five, maxEntries: 3 } })).toEqual({
        inserted: true,
      });
      expect(await store.timeline?.read(bounded.taskId)).toEqual([entry(1), entry(4), entry(5)]);
      // Refused by a cap, and a duplicate id: neither stores an entry.
      const capped = makeRecord({ owner });
      const refused = await store.insert(
        capped,
        { maxActive: 4 },
        { timeline: { entries: [entry(99)], maxEntries: 10 } },
      );
      expect(refused).toMatchObject({ inserted: false, reason: 'limit' });
      expect(await store.timeline?.read(capped.taskId)).toEqual([]);
      const duplicate = { ...makeRecord({ owner: 'other' }), taskId: (records[0] as TaskRecord).taskId };
      expect(await store.insert(duplicate, {}, { timeline: { entries: [entry(98)], maxEntries: 10 } })).toMatchObject({
        inserted: false,
        reason: 'duplicate_id',
      });
      expect(await store.timeline?.read(duplicate.taskId)).toEqual([entry(0), entry(10)]);
    });

    it('carries a change to a sibling instance, and a task id of any text as it was', async () => {
      if (!harness.sibling || !harness.carriesEvents) return;
      const sibling = await harness.sibling(store);
      opened.push(sibling);
      const seen: Array<[string, TaskChange | undefined]> = [];
      // Ids are any string (SEP-1686 lets clients choose them): one that looks like an encoded event stays an id.
      const odd = '["t",1,"working"]';
      for (const id of ['task-c', odd]) store.events.subscribe(id, (change) => seen.push([id, change]));
      await sibling.events.publish('task-c', { version: 3, status: 'input_required' });
      await sibling.events.publish(odd);
      await sibling.events.publish(odd, { version: 2, status: 'failed' });
      await waitUntil(() => seen.length === 3);
      expect(seen).toEqual([
        ['task-c', { version: 3, status: 'input_required' }],
        [odd, undefined],
        [odd, { version: 2, status: 'failed' }],
      ]);
    });
  });
}

export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
