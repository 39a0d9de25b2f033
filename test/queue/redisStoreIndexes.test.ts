// The Redis store's scripts write only what a transition changes: after every step of a task's life (creation with and
// without an expiry, claim, progress, input, a second claim, the outcome, a lease renewal, deletion) the record's hash,
// its indexes, its byte counts and the native TTLs of the task and its timeline are what the record says.
import { randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isTerminal, TaskEngine, type TaskRecord } from '../../src/engine/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { redisUrl } from '../distributed/suites.js';

if (redisUrl) {
  const url = redisUrl;
  describe('Redis store indexes after each transition', () => {
    const prefix = `mcp-tasks-idx-${randomUUID().slice(0, 8)}:`;
    let redis: Redis;
    let store: RedisStore;
    let engine: TaskEngine;

    beforeAll(async () => {
      redis = new Redis(url);
      store = new RedisStore({ url, keyPrefix: prefix });
      engine = new TaskEngine({ store, sweepIntervalMs: 0, recoveryIntervalMs: 0 });
      await engine.start();
    });
    afterAll(async () => {
      await engine?.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    /** Every index entry of the task matches its stored record. */
    async function expectConsistent(taskId: string): Promise<TaskRecord> {
      const record = (await store.get(taskId)) as TaskRecord;
      const tkey = `${prefix}t:${taskId}`;
      const hash = await redis.hgetall(tkey);
      const [, , member, activeKey] = JSON.parse(hash['x'] as string) as [string, string, string, string];
      const active = !isTerminal(record.status);
      expect(hash['s']).toBe(record.status);
      for (const status of ['working', 'input_required', 'completed', 'failed', 'cancelled']) {
        expect(await redis.zscore(`${prefix}s:${status}`, member), status).toBe(status === record.status ? '0' : null);
      }
      expect(await redis.sismember(activeKey, taskId)).toBe(active ? 1 : 0);
      const leased = active && record.leaseUntil !== undefined;
      expect(hash['l']).toBe(leased ? String(record.leaseUntil) : undefined);
      expect(await redis.zscore(`${prefix}leases`, taskId)).toBe(leased ? String(record.leaseUntil) : null);
      const runnerKey = leased && record.runner !== undefined ? `${prefix}r:${record.runner}` : undefined;
      expect(hash['r']).toBe(runnerKey);
      for (const key of await redis.keys(`${prefix}r:*`)) {
        expect(await redis.sismember(key, taskId), key).toBe(key === runnerKey ? 1 : 0);
      }
      const expires = record.expiresAt !== null;
      expect(hash['e']).toBe(expires ? String(record.expiresAt) : undefined);
      expect(await redis.zscore(`${prefix}expiry`, hash['x'] as string)).toBe(
        expires ? String(record.expiresAt) : null,
      );
      const ttl = await redis.pttl(tkey);
      if (expires) expect(ttl).toBeGreaterThan(0);
      else expect(ttl).toBe(-1);
      const timelineTtl = await redis.pttl(`${prefix}tl:${taskId}`);
      if (expires) expect(Math.abs(timelineTtl - ttl)).toBeLessThan(5_000);
      else expect(timelineTtl).toBe(-1);
      // The counted size: exact once the task is finished, within the settling bound while it runs.
      const bytes = Buffer.byteLength(hash['d'] as string);
      if (active) expect(Math.abs(Number(hash['b']) - bytes)).toBeLessThan(1024);
      else expect(hash['b']).toBe(String(bytes));
      expect(await redis.hget(`${prefix}bytes`, taskId)).toBe(hash['b']);
      return record;
    }

    /** The owner's and the store's byte counts are the sums over their stored tasks. */
    async function expectByteTotals(owner: string): Promise<void> {
      const perTask = await redis.hgetall(`${prefix}bytes`);
      const sum = Object.values(perTask).reduce((total, n) => total + Number(n), 0);
      expect(Number((await redis.get(`${prefix}tb`)) ?? 0)).toBe(sum);
      expect(Number((await redis.hget(`${prefix}ob`, owner)) ?? 0)).toBe(sum);
    }

    const call = { method: 'tools/call', params: { name: 'job', arguments: { n: 1 } } };

    it('keeps every index in step with the record through a task’s life', async () => {
      const owner = `owner-${randomUUID().slice(0, 8)}`;
      const { task: kept } = await engine.create({
        owner,
        request: call,
        dialect: 't',
        retention: { kind: 'keepAlive', keepAliveMs: 600_000 },
      });
      const { task } = await engine.create({
        owner,
        request: call,
        dialect: 't',
        retention: { kind: 'ttl', ttlMs: 600_000 },
      });
      // Kept alive from its end: no expiry until then.
      expect((await expectConsistent(kept.taskId)).expiresAt).toBeNull();
      await expectConsistent(task.taskId);
      await expectByteTotals(owner);

      let record = await engine.markStarted(task.taskId, 'runner-a', 1);
      expect(record?.runner).toBe('runner-a');
      await expectConsistent(task.taskId);
      await engine.reportProgress(task.taskId, { progress: 1, total: 2, message: 'half' }, 1);
      await expectConsistent(task.taskId);
      await engine.renewLeases('runner-a');
      await expectConsistent(task.taskId);
      await engine.requestInput(task.taskId, [{ method: 'elicitation/create', params: { message: 'ok?' } }], 1);
      expect((await expectConsistent(task.taskId)).status).toBe('input_required');
      // Another runner takes the task over: the first runner's set loses it.
      record = await engine.markStarted(task.taskId, 'runner-b', 2);
      expect(record?.runner).toBe('runner-b');
      await expectConsistent(task.taskId);
      expect(
        await engine.complete(task.taskId, { kind: 'result', result: { done: true } }, undefined, undefined, 2),
      ).toBe(true);
      expect((await expectConsistent(task.taskId)).status).toBe('completed');
      await expectByteTotals(owner);

      await engine.markStarted(kept.taskId, 'runner-a', 1);
      await expectConsistent(kept.taskId);
      expect(await engine.fail(kept.taskId, 'broken')).toBe(true);
      expect((await expectConsistent(kept.taskId)).expiresAt).not.toBeNull();
      await expectByteTotals(owner);

      expect(await store.delete(task.taskId)).toBe(true);
      expect(await redis.exists(`${prefix}t:${task.taskId}`)).toBe(0);
      await expectByteTotals(owner);
    });
  });
}
