// One owner's creations through a queue executor (real BullMQ on Redis): they overlap while the owner's count leaves
// room for all of them, and near the cap each count sees the inserts before it, so the cap holds exactly and no job
// is queued for a creation the store refuses.
import { afterEach, describe, expect, it } from 'vitest';

import { StoreUnavailableError, TaskEngine, TaskLimitError, type TaskStore } from '../../src/engine/index.js';
import { QueueExecutor } from '../../src/executors/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { isolatedQueue } from './backends.js';
import { redisUrl, sleep } from './suites.js';

const request = { method: 'tools/call', params: { name: 'x' } };

/** A memory store whose inserts take `ms`, with the most inserts seen running at once. */
function slowInserts(ms: number): { store: TaskStore; mostAtOnce: () => number } {
  const inner = new MemoryStore();
  let running = 0;
  let most = 0;
  const store: TaskStore = Object.assign(Object.create(inner) as TaskStore, {
    insert: async (...args: Parameters<TaskStore['insert']>) => {
      running++;
      most = Math.max(most, running);
      try {
        await sleep(ms);
        return await inner.insert(args[0], args[1]);
      } finally {
        running--;
      }
    },
  });
  return { store, mostAtOnce: () => most };
}

if (redisUrl) {
  const queueRedis = redisUrl;
  describe("one owner's creations on a queue executor", () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function open(store: TaskStore, maxActivePerOwner: number) {
      const queue = isolatedQueue(queueRedis);
      const engine = new TaskEngine({
        store,
        sweepIntervalMs: 0,
        recoveryIntervalMs: 0,
        limits: { maxActivePerOwner },
      });
      const executor = new QueueExecutor({ engine, connection: queueRedis, queueName: queue.name });
      engine.setExecutor(executor);
      await engine.start();
      cleanups.push(async () => {
        await executor.close();
        await engine.close();
        await queue.dispose();
      });
      const queued = async () => {
        const counts = await executor.queue.getJobCounts('waiting', 'prioritized', 'delayed');
        return Object.values(counts).reduce((sum, n) => sum + n, 0);
      };
      return { engine, queued };
    }

    it('overlap while the count leaves room for every creation in flight', async () => {
      const slow = slowInserts(50);
      const { engine, queued } = await open(slow.store, 1000);
      const created = await Promise.all(
        Array.from({ length: 10 }, () => engine.create({ owner: 'o', request, dialect: 't' })),
      );
      expect(new Set(created.map(({ task }) => task.taskId)).size).toBe(10);
      expect(slow.mostAtOnce()).toBeGreaterThan(1);
      expect(await queued()).toBe(10);
    });

    it('far below the cap, read the owner count once for creations close together', async () => {
      const store = new MemoryStore();
      let reads = 0;
      let failGet = false;
      const counting: TaskStore = Object.assign(Object.create(store) as TaskStore, {
        countActive: (owner: string) => {
          reads++;
          return store.countActive(owner);
        },
        get: (taskId: string) => {
          if (!failGet) return store.get(taskId);
          failGet = false;
          return Promise.reject(new Error('Connection is closed.'));
        },
      });
      const { engine, queued } = await open(counting, 1000);
      await engine.create({ owner: 'o', request, dialect: 't' });
      await engine.create({ owner: 'o', request, dialect: 't' });
      await Promise.all(Array.from({ length: 8 }, () => engine.create({ owner: 'o', request, dialect: 't' })));
      // One read, unless this machine stalled past the reuse window between them; never one a creation.
      expect(reads).toBeGreaterThanOrEqual(1);
      expect(reads).toBeLessThan(10);
      expect(await queued()).toBe(10);

      // Once the store is in trouble (here a read loses its connection), the next creation reads the count, though
      // the last one is recent.
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      const before = reads;
      failGet = true;
      await expect(engine.get('o', task.taskId)).rejects.toBeInstanceOf(StoreUnavailableError);
      await engine.create({ owner: 'o', request, dialect: 't' });
      expect(reads).toBe(before + 1);
      // Near a cap every creation reads it: another engine, with a cap of 3, reads it for each of its creations.
      const capped = await open(counting, 3);
      reads = 0;
      for (let i = 0; i < 2; i++) await capped.engine.create({ owner: 'p', request, dialect: 't' });
      expect(reads).toBe(2);
    });

    it('hold the cap exactly near it, queueing no job for a refused creation', async () => {
      const slow = slowInserts(20);
      const { engine, queued } = await open(slow.store, 5);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => engine.create({ owner: 'o', request, dialect: 't' })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof TaskLimitError)).toHaveLength(15);
      expect(await slow.store.countActive('o')).toBe(5);
      expect(await queued()).toBe(5);
    });

    it('let another owner create while one waits at its cap', async () => {
      const { engine } = await open(new MemoryStore(), 2);
      await engine.create({ owner: 'o', request, dialect: 't' });
      await engine.create({ owner: 'o', request, dialect: 't' });
      await expect(engine.create({ owner: 'o', request, dialect: 't' })).rejects.toBeInstanceOf(TaskLimitError);
      expect((await engine.create({ owner: 'p', request, dialect: 't' })).created).toBe(true);
    });
  });
}
