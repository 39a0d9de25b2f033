// Fair claims of queue workers (real BullMQ on Redis): an owner takes at most its share of a worker's slots, a job
// that may not start yet goes back to the queue without being lost, and a tool's concurrency limit holds across
// every worker of the queue.
import { afterEach, describe, expect, it } from 'vitest';

import { isTerminal, TaskEngine, type TaskWork } from '../../src/engine/index.js';
import { QueueExecutor, QueueWorker, type QueueWorkerOptions } from '../../src/executors/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { allTerminal, callOf as call, gatedWork } from '../helpers/gatedWork.js';
import { eventually } from '../helpers/rawWire.js';
import { isolatedQueue } from './backends.js';
import { redisUrl } from './suites.js';

if (redisUrl) {
  const queueRedis = redisUrl;
  describe('QueueWorker fair claims', () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function setup() {
      const queue = isolatedQueue(queueRedis);
      const engine = new TaskEngine({ store: new MemoryStore(), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
      const executor = new QueueExecutor({
        engine,
        store: engine.store,
        connection: queueRedis,
        queueName: queue.name,
      });
      engine.setExecutor(executor);
      await engine.start();
      cleanups.push(async () => {
        await executor.close();
        await engine.close();
        await queue.dispose();
      });
      const startWorker = async (work: TaskWork, options: Partial<QueueWorkerOptions> = {}) => {
        const worker = new QueueWorker({
          engine,
          work,
          connection: queueRedis,
          queueName: queue.name,
          deferMs: 100,
          ...options,
        });
        await worker.start();
        cleanups.push(() => worker.close({ timeoutMs: 0 }));
        return worker;
      };
      return { engine, startWorker };
    }

    it("one owner's 16 long tasks do not keep another owner's quick task from running", async () => {
      const gated = gatedWork();
      const { engine, startWorker } = await setup();
      const worker = await startWorker(gated.work, { concurrency: 16 });
      const long = new Map<string, string>();
      for (let i = 0; i < 16; i++) {
        const { task } = await engine.create({ owner: 'alice', request: call('long'), dialect: 't' });
        long.set(task.taskId, 'alice');
      }
      await eventually(() => gated.gates.size === 12);
      const { task: quick } = await engine.create({ owner: 'bob', request: call('quick'), dialect: 't' });
      expect((await engine.waitForTerminal(quick.taskId))?.status).toBe('completed');
      // bob's task finished while all of alice's were unfinished; she never held more than her share.
      expect(await allTerminal(engine, long)).toBe(false);
      for (const id of long.keys()) expect(isTerminal((await engine.get('alice', id)).status)).toBe(false);
      expect(worker.activeTaskIds.length).toBeLessThanOrEqual(12);
      // The four deferred jobs were not lost: they run once slots free up.
      await eventually(async () => {
        gated.releaseAll();
        return allTerminal(engine, long);
      }, 20_000);
      for (const id of long.keys()) expect((await engine.get('alice', id)).status).toBe('completed');
      expect(gated.peak.get('long')).toBe(12);
    });

    it("a third owner's task goes ahead of two owners' backlogs: jobs are ordered round-robin across owners", async () => {
      const gated = gatedWork();
      const { engine, startWorker } = await setup();
      const tasks = new Map<string, string>();
      const owners = new Map<string, string>();
      for (const owner of ['alice', 'bob']) {
        for (let i = 0; i < 6; i++) {
          const { task } = await engine.create({ owner, request: call('long'), dialect: 't' });
          tasks.set(task.taskId, owner);
          owners.set(task.taskId, owner);
        }
      }
      await startWorker(gated.work, { concurrency: 4 });
      await eventually(() => gated.gates.size === 4);
      const { task: quick } = await engine.create({ owner: 'carol', request: call('quick'), dialect: 't' });
      owners.set(quick.taskId, 'carol');
      // One slot frees: carol's first task goes ahead of both backlogs.
      gated.release(gated.started[0] as string);
      expect((await engine.waitForTerminal(quick.taskId))?.status).toBe('completed');
      const order = gated.started.map((id) => owners.get(id));
      // Queued before the worker started, they were taken round-robin: each owner's k-th task has priority k.
      expect(order.slice(0, 5)).toEqual(['alice', 'bob', 'alice', 'bob', 'carol']);
      await eventually(async () => {
        gated.releaseAll();
        return allTerminal(engine, tasks);
      }, 20_000);
    });

    it("a tool's concurrency limit holds across workers, and its deferred jobs all run", async () => {
      const gated = gatedWork();
      const { engine, startWorker } = await setup();
      for (let i = 0; i < 2; i++) await startWorker(gated.work, { concurrency: 4, toolConcurrency: { long: 2 } });
      const tasks = new Map<string, string>();
      for (const owner of ['alice', 'bob']) {
        for (let i = 0; i < 5; i++) {
          const { task } = await engine.create({ owner, request: call('long'), dialect: 't' });
          tasks.set(task.taskId, owner);
        }
      }
      await eventually(() => gated.gates.size === 2);
      // Another tool is not held up by the limited one.
      const { task: quick } = await engine.create({ owner: 'alice', request: call('quick'), dialect: 't' });
      expect((await engine.waitForTerminal(quick.taskId))?.status).toBe('completed');
      expect(gated.gates.size).toBe(2);
      await eventually(async () => {
        gated.releaseAll();
        return allTerminal(engine, tasks);
      }, 30_000);
      for (const [id, owner] of tasks) expect((await engine.get(owner, id)).status).toBe('completed');
      expect(gated.peak.get('long')).toBe(2);
    });
  });
}
