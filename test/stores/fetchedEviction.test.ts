import { afterEach, describe, expect, it } from 'vitest';

import type { TaskRecord, TaskStore } from '../../src/engine/index.js';
import { makeRecord } from '../helpers/records.js';
import { eachStore } from './eachStore.js';

const bytesOf = (record: TaskRecord) => Buffer.byteLength(JSON.stringify(record), 'utf8');

eachStore(
  'fetched',
  async (store) => {
    await store.init();
    return store;
  },
  (name, harness) => {
    describe(`fetched tasks and stored bytes: ${name}`, () => {
      const opened: TaskStore[] = [];
      const open = async () => {
        const store = await harness.create();
        opened.push(store);
        return store;
      };
      afterEach(async () => {
        for (const store of opened.splice(0)) await store.close();
      });

      it('evicts only terminal tasks marked fetched, earliest fetched first, of the owner or of anyone', async () => {
        const store = await open();
        const a = makeRecord({ status: 'completed' });
        const b = makeRecord({ status: 'failed' });
        const running = makeRecord();
        const unfetched = makeRecord({ status: 'completed' });
        const other = makeRecord({ owner: 'owner-b', status: 'cancelled' });
        for (const r of [a, b, running, unfetched, other]) expect(await store.insert(r)).toEqual({ inserted: true });
        await store.markFetched?.(b.taskId, 10);
        await store.markFetched?.(a.taskId, 20);
        // The first mark stays: b is still the earliest fetched.
        await store.markFetched?.(b.taskId, 30);
        // A running task has no outcome to deliver: never marked, never evicted.
        await store.markFetched?.(running.taskId, 1);
        await store.markFetched?.(other.taskId, 5);
        await store.markFetched?.('missing', 5);

        expect(await store.evictFetched?.('owner-a', 1)).toEqual([b.taskId]);
        expect(await store.get(b.taskId)).toBeUndefined();
        expect(await store.evictFetched?.('owner-a', 10)).toEqual([a.taskId]);
        expect(await store.evictFetched?.('owner-a', 10)).toEqual([]);
        for (const kept of [running, unfetched, other]) expect(await store.get(kept.taskId)).toBeDefined();
        expect(await store.evictFetched?.(undefined, 10)).toEqual([other.taskId]);

        // Eviction frees the owner's stored-task count.
        const limits = { maxStored: 3 };
        expect(await store.insert(makeRecord(), limits)).toEqual({ inserted: true });
        expect(await store.insert(makeRecord(), limits)).toMatchObject({ reason: 'limit', limit: 'stored' });
      });

      it('forgets the mark of a task deleted or swept otherwise', async () => {
        const store = await open();
        const deleted = makeRecord({ status: 'completed' });
        const expired = makeRecord({ status: 'completed', expiresAt: Date.now() - 1 });
        for (const r of [deleted, expired]) await store.insert(r);
        await store.markFetched?.(deleted.taskId, 1);
        await store.markFetched?.(expired.taskId, 2);
        expect(await store.delete(deleted.taskId)).toBe(true);
        expect(await store.sweepExpired(Date.now(), 10)).toHaveLength(1);
        expect(await store.evictFetched?.(undefined, 10)).toEqual([]);
        expect(await store.evictFetched?.('owner-a', 10)).toEqual([]);
      });

      it('counts the bytes of stored records per owner and in total, refusing at the owner’s byte cap', async () => {
        const store = await open();
        expect(await store.storedBytes?.()).toBe(0);
        const big = makeRecord({ statusMessage: 'é'.repeat(500) });
        const small = makeRecord({ owner: 'owner-b' });
        await store.insert(big);
        await store.insert(small);
        expect(await store.storedBytes?.()).toBe(bytesOf(big) + bytesOf(small));
        // A result stored later counts from then on.
        const done: TaskRecord = {
          ...big,
          status: 'completed',
          outcome: { kind: 'result', result: { content: [{ type: 'text', text: 'x'.repeat(3000) }] } },
          version: 2,
        };
        expect(await store.replace(done, 1)).toBe(true);
        expect(await store.storedBytes?.()).toBe(bytesOf(done) + bytesOf(small));

        const limits = { maxStoredBytes: bytesOf(done) };
        expect(await store.insert(makeRecord(), limits)).toEqual({
          inserted: false,
          reason: 'limit',
          limit: 'stored_bytes',
        });
        expect(await store.insert(makeRecord({ owner: 'owner-b' }), limits)).toEqual({ inserted: true });
        await store.markFetched?.(done.taskId, 1);
        expect(await store.evictFetched?.('owner-a', 1)).toEqual([done.taskId]);
        expect(await store.insert(makeRecord(), limits)).toEqual({ inserted: true });
        expect(await store.delete(small.taskId)).toBe(true);
        const left = await Promise.all(
          (await store.list('owner-a', { limit: 10, now: 0 }))
            .concat(await store.list('owner-b', { limit: 10, now: 0 }))
            .map((r) => store.get(r.taskId)),
        );
        expect(await store.storedBytes?.()).toBe(left.reduce((sum, r) => sum + bytesOf(r as TaskRecord), 0));
      });
    });
  },
);
