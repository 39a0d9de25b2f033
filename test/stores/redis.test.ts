import { randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { TaskEngine, type TaskStore } from '../../src/engine/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { makeRecord } from '../helpers/records.js';
import { requireService } from '../helpers/services.js';
import { storeContract, waitUntil } from './storeContract.js';

const url = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');

if (url) {
  // Each store gets its own key prefix, so every test starts empty; all of them are deleted at the end.
  const admin = new Redis(url);
  const prefixes: string[] = [];
  const prefixOf = new WeakMap<TaskStore, string>();

  const newPrefix = () => {
    const prefix = `mcp-tasks-test:${randomUUID()}:`;
    prefixes.push(prefix);
    return prefix;
  };
  const open = async (keyPrefix: string, options: { nativeExpiryGraceMs?: number } = {}): Promise<RedisStore> => {
    const store = new RedisStore({ url, keyPrefix, ...options });
    await store.init();
    prefixOf.set(store, keyPrefix);
    return store;
  };
  const keysOf = (prefix: string) => admin.keys(`${prefix}*`);

  afterAll(async () => {
    for (const prefix of prefixes) {
      const keys = await keysOf(prefix);
      if (keys.length > 0) await admin.del(...keys);
    }
    await admin.quit();
  });

  storeContract('redis', {
    create: () => open(newPrefix()),
    sibling: (store) => open(prefixOf.get(store) as string),
    carriesEvents: true,
  });

  describe('RedisStore on a real server', () => {
    const opened: Array<{ close(): Promise<void> }> = [];
    const track = <T extends { close(): Promise<void> }>(value: T): T => {
      opened.push(value);
      return value;
    };
    afterEach(async () => {
      for (const item of opened.splice(0)) await item.close();
    });

    it('wakes a subscriber on a sibling instance, and not on a store with another prefix', async () => {
      const prefix = newPrefix();
      const a = track(await open(prefix));
      const b = track(await open(prefix));
      const other = track(await open(newPrefix()));
      let woken = 0;
      let foreign = 0;
      a.events.subscribe('task-x', () => woken++);
      other.events.subscribe('task-x', () => foreign++);
      await b.events.publish('task-x');
      await waitUntil(() => woken === 1);
      // `other` shares the server; its own publish arriving proves `b`'s would have arrived by now.
      let marker = false;
      other.events.subscribe('task-m', () => (marker = true));
      await other.events.publish('task-m');
      await waitUntil(() => marker);
      expect(foreign).toBe(0);
    });

    it('keeps delivering events after its subscriber connection is killed', async () => {
      const prefix = newPrefix();
      const a = track(await open(prefix));
      const b = track(await open(prefix));
      let woken = 0;
      a.events.subscribe('task-r', () => woken++);
      const clients = (await admin.client('LIST')) as string;
      const line = clients.split('\n').find((l) => l.includes(` name=${a.events.connectionName} `));
      const id = /\bid=(\d+)/.exec(line ?? '')?.[1];
      expect(id).toBeDefined();
      await admin.client('KILL', 'ID', id as string);
      // The reconnect wakes subscribers once (events may have been lost while down).
      await waitUntil(() => woken === 1);
      await b.events.publish('task-r');
      await waitUntil(() => woken === 2);
    });

    it('keeps every index consistent through a task’s life and leaves no keys behind', async () => {
      const prefix = newPrefix();
      const store = track(await open(prefix));
      const now = Date.now();
      const record = makeRecord({ idempotencyKey: 'k:1', runner: 'r', leaseUntil: now + 1000, expiresAt: now + 1 });
      await store.insert(record);
      expect(await store.countActive('owner-a')).toBe(1);
      await store.renewLeases('r', now + 9000);
      expect((await store.get(record.taskId))?.leaseUntil).toBe(now + 9000);
      // Renewal rewrote neither the record nor its version.
      expect(await admin.hget(`${prefix}t:${record.taskId}`, 'v')).toBe('1');
      const done = { ...record, status: 'completed' as const, version: 2, runner: undefined, leaseUntil: undefined };
      expect(await store.replace(done, 1)).toBe(true);
      expect(await store.countActive('owner-a')).toBe(0);
      expect(await store.findStale(now + 60_000, 10)).toEqual([]);
      expect(await admin.scard(`${prefix}r:r`)).toBe(0);
      expect((await store.sweepExpired(now + 2, 10)).map((r) => r.taskId)).toEqual([record.taskId]);
      expect((await keysOf(prefix)).filter((key) => !key.endsWith('secret'))).toEqual([]);
    });

    it('sets a native expiry on the record as a backstop and still sweeps the indexes after Redis dropped it', async () => {
      const prefix = newPrefix();
      const store = track(await open(prefix, { nativeExpiryGraceMs: 50 }));
      const now = Date.now();
      const record = makeRecord({ idempotencyKey: 'k', runner: 'r', leaseUntil: now + 60_000, expiresAt: now + 20 });
      await store.insert(record);
      const ttl = await admin.pttl(`${prefix}t:${record.taskId}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(20 + 50 + 5);
      await waitUntil(async () => (await admin.exists(`${prefix}t:${record.taskId}`)) === 0);
      expect(await store.getByIdempotencyKey('owner-a', 'k')).toBeUndefined();
      // The key is free again, and sweeping the dead entry must not take it from its new holder.
      const next = makeRecord({ idempotencyKey: 'k', expiresAt: null });
      expect(await store.insert(next)).toEqual({ inserted: true });
      expect(await store.sweepExpired(Date.now(), 10)).toEqual([]);
      expect((await store.getByIdempotencyKey('owner-a', 'k'))?.taskId).toBe(next.taskId);
      expect((await store.list('owner-a', { limit: 10, now: Date.now() })).map((r) => r.taskId)).toEqual([next.taskId]);
      expect(await store.countActive('owner-a')).toBe(1);
      expect(await admin.zcard(`${prefix}leases`)).toBe(0);
      expect(await admin.zcard(`${prefix}expiry`)).toBe(0);
    });

    it('removes the native expiry when a task becomes unlimited', async () => {
      const prefix = newPrefix();
      const store = track(await open(prefix));
      const record = makeRecord();
      await store.insert(record);
      expect(await admin.pttl(`${prefix}t:${record.taskId}`)).toBeGreaterThan(0);
      await store.replace({ ...record, expiresAt: null, version: 2 }, 1);
      expect(await admin.pttl(`${prefix}t:${record.taskId}`)).toBe(-1);
    });

    it('gives a timeline appended with a write its task’s native expiry', async () => {
      const prefix = newPrefix();
      const store = track(await open(prefix));
      const record = makeRecord({ expiresAt: Date.now() + 60_000 });
      await store.insert(record);
      const entry = { at: 1, kind: 'status' as const, from: 'working' as const, status: 'completed' as const };
      const along = {
        change: { version: 2, status: 'completed' as const },
        timeline: { entries: [entry], maxEntries: 10 },
      };
      expect(await store.replace({ ...record, status: 'completed', version: 2 }, 1, along)).toBe(true);
      const ttl = await admin.pttl(`${prefix}tl:${record.taskId}`);
      expect(ttl).toBeGreaterThan(0);
      expect(Math.abs(ttl - (await admin.pttl(`${prefix}t:${record.taskId}`)))).toBeLessThan(1000);
    });

    it('wakes an engine waiting in one process when another finishes the task', async () => {
      const prefix = newPrefix();
      const options = { recheckIntervalMs: 60_000, sweepIntervalMs: 0, recoveryIntervalMs: 0 };
      const waiter = track(new TaskEngine({ store: await open(prefix), ...options }));
      const worker = track(new TaskEngine({ store: await open(prefix), ...options }));
      await waiter.start();
      await worker.start();
      const { task } = await waiter.create({ owner: 'o', request: { method: 'tools/call', params: {} }, dialect: 't' });
      const done = waiter.waitForTerminal(task.taskId);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      await worker.complete(task.taskId, { kind: 'result', result: { content: [] } });
      expect((await done)?.status).toBe('completed');
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });
}
