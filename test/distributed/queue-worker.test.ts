// The queue executor and worker in one process (real Redis for BullMQ, an in-memory store): who owns a run when,
// and what happens when Redis or the store misbehave. The multi-process suites cover the same through real signals.
import { afterEach, describe, expect, it } from 'vitest';

import {
  TaskEngine,
  type EngineLogger,
  type TaskRecord,
  type TaskStore,
  type TaskWork,
} from '../../src/engine/index.js';
import {
  QueueExecutor,
  QueueUnavailableError,
  QueueWorker,
  TASK_JOB_NAME,
  taskJobId,
} from '../../src/executors/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { eventually } from '../helpers/rawWire.js';
import { isolatedQueue } from './backends.js';
import { redisUrl } from './suites.js';

const request = { method: 'tools/call', params: { name: 'x' } };
const ok = { kind: 'result', result: { ok: true } } as const;

/** Work that runs until aborted, reporting the abort. */
function untilAborted(seen: unknown[]): TaskWork {
  return ({ signal }) =>
    new Promise((_, reject) =>
      signal.addEventListener('abort', () => {
        seen.push(signal.reason);
        reject(signal.reason);
      }),
    );
}

function recordingLogger(lines: Array<{ message: string; fields: Record<string, unknown> }>): EngineLogger {
  const push = (fields: Record<string, unknown>, message: string) => lines.push({ message, fields });
  return { info: push, warn: push, error: push };
}

/** A task as its creation would insert it, not stored anywhere yet. */
async function unstoredTask(): Promise<TaskRecord> {
  const scratch = new TaskEngine({ store: new MemoryStore(), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
  const { task } = await scratch.create({ owner: 'o', request, dialect: 't', run: false });
  await scratch.close();
  return task;
}

/** The task once it has completed. */
function completed(engine: TaskEngine, taskId: string): Promise<TaskRecord> {
  return eventually(async () => {
    const record = await engine.get('o', taskId);
    return record.status === 'completed' ? record : undefined;
  });
}

if (redisUrl) {
  const queueRedis = redisUrl;
  describe('QueueExecutor and QueueWorker', () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function setup(options: { store?: TaskStore; leaseMs?: number } = {}) {
      const queue = isolatedQueue(queueRedis);
      const engine = new TaskEngine({
        store: options.store ?? new MemoryStore(),
        sweepIntervalMs: 0,
        recoveryIntervalMs: 0,
        leaseMs: options.leaseMs ?? 15_000,
      });
      const executor = new QueueExecutor({ engine, connection: queueRedis, queueName: queue.name });
      engine.setExecutor(executor);
      await engine.start();
      cleanups.push(async () => {
        await executor.close();
        await engine.close();
        await queue.dispose();
      });
      const startWorker = async (work: TaskWork, logger?: EngineLogger) => {
        const worker = new QueueWorker({
          engine,
          work,
          connection: queueRedis,
          queueName: queue.name,
          concurrency: 4,
          ...(logger && { logger }),
        });
        await worker.start();
        cleanups.push(() => worker.close({ timeoutMs: 0 }));
        return worker;
      };
      return { engine, executor, startWorker };
    }

    it('creates tasks unleased, queues one job per run, and a worker runs them to their outcome', async () => {
      const { engine, executor, startWorker } = await setup();
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      // Waiting in the queue belongs to no runner, so a long queue is never mistaken for a dead one.
      expect(task.runner).toBeUndefined();
      expect(task.leaseUntil).toBeUndefined();
      expect(await executor.queue.getJob(taskJobId(task.taskId, 1))).toBeDefined();
      const worker = await startWorker(async () => ok);
      const done = await engine.waitForTerminal(task.taskId);
      expect(done?.status).toBe('completed');
      expect(done?.outcome).toEqual(ok);
      expect(done?.attempts).toBe(1);
      const job = await eventually(async () => {
        const found = await executor.queue.getJob(taskJobId(task.taskId, 1));
        return found?.finishedOn ? found : undefined;
      });
      expect(job.returnvalue).toEqual({ taskId: task.taskId, attempt: 1, outcome: 'finished' });
      expect(worker.activeTaskIds).toEqual([]);
    });

    it('skips a job whose run has already started elsewhere (a redelivered job): the lease decides from then on', async () => {
      const { engine, executor, startWorker } = await setup();
      const { task } = await engine.create({ owner: 'o', request, dialect: 't', run: false });
      await engine.markStarted(task.taskId, 'another-runner');
      let ran = false;
      await startWorker(async () => {
        ran = true;
        return ok;
      });
      await executor.submit({ ...task, attempts: 0 });
      const job = await eventually(async () => {
        const found = await executor.queue.getJob(taskJobId(task.taskId, 1));
        return found?.finishedOn ? found : undefined;
      });
      expect(job.returnvalue).toMatchObject({ outcome: 'skipped', reason: 'run 1 has already started' });
      expect(ran).toBe(false);
      const record = await engine.get('o', task.taskId);
      expect(record.status).toBe('working');
      expect(record.runner).toBe('another-runner');
    });

    it('aborts a run, without reporting, when another runner takes the task over', async () => {
      const { engine, startWorker } = await setup();
      const aborts: unknown[] = [];
      const worker = await startWorker(untilAborted(aborts));
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      await eventually(() => worker.activeTaskIds.includes(task.taskId));
      await engine.markStarted(task.taskId, 'successor');
      await eventually(() => aborts.length === 1);
      expect(String(aborts[0])).toMatch(/another runner has taken the task over/);
      await eventually(() => worker.activeTaskIds.length === 0);
      const record = await engine.get('o', task.taskId);
      expect(record.status).toBe('working');
      expect(record.runner).toBe('successor');
    });

    it('aborts the running work when the task is cancelled', async () => {
      const { engine, startWorker } = await setup();
      const aborts: unknown[] = [];
      const worker = await startWorker(untilAborted(aborts));
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      await eventually(() => worker.activeTaskIds.includes(task.taskId));
      await engine.cancel('o', task.taskId);
      await eventually(() => aborts.length === 1);
      expect(String(aborts[0])).toMatch(/the task is cancelled/);
      expect((await engine.get('o', task.taskId)).status).toBe('cancelled');
    });

    it('hands a job back to the queue when the store cannot be read, and runs it once the store answers', async () => {
      const inner = new MemoryStore();
      let failing = 8;
      const store: TaskStore = Object.assign(Object.create(inner) as TaskStore, {
        get: (taskId: string) => (failing-- > 0 ? Promise.reject(new Error('store down')) : inner.get(taskId)),
      });
      const { engine, executor, startWorker } = await setup({ store });
      const { task } = await engine.create({ owner: 'o', request, dialect: 't', run: false });
      const lines: Array<{ message: string; fields: Record<string, unknown> }> = [];
      await startWorker(async () => ok, recordingLogger(lines));
      failing = 8;
      // A job without its task (as a re-run's may be), so the claim must read the store.
      await executor.queue.add(
        TASK_JOB_NAME,
        { taskId: task.taskId, attempt: 1 },
        { jobId: taskJobId(task.taskId, 1) },
      );
      const done = await eventually(async () => {
        const record = await inner.get(task.taskId);
        return record?.status === 'completed' ? record : undefined;
      });
      expect(done.attempts).toBe(1);
      expect(lines.some((line) => line.message === 'task job handed back to the queue')).toBe(true);
    });

    it("claims a job's carried task by compare-and-set, without reading the task first", async () => {
      const inner = new MemoryStore();
      let reads = 0;
      const store: TaskStore = Object.assign(Object.create(inner) as TaskStore, {
        get: (taskId: string) => {
          reads++;
          return inner.get(taskId);
        },
      });
      const { engine, executor, startWorker } = await setup({ store });
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      const job = await executor.queue.getJob(taskJobId(task.taskId, 1));
      expect(job?.data).toEqual({ taskId: task.taskId, attempt: 1, record: task });
      reads = 0;
      await startWorker(async () => ok);
      const done = await eventually(async () => {
        const record = await inner.get(task.taskId);
        return record?.status === 'completed' ? record : undefined;
      });
      expect(done.attempts).toBe(1);
      expect(reads).toBe(0);
    });

    it('decides on a read when the carried task has changed since: a cancelled one never runs', async () => {
      const { engine, executor, startWorker } = await setup();
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      await engine.cancel('o', task.taskId);
      let ran = false;
      await startWorker(async () => {
        ran = true;
        return ok;
      });
      const job = await eventually(async () => {
        const found = await executor.queue.getJob(taskJobId(task.taskId, 1));
        return found?.finishedOn ? found : undefined;
      });
      expect(job.returnvalue).toMatchObject({ outcome: 'skipped', reason: 'the task is already cancelled' });
      expect(ran).toBe(false);
    });

    it('runs a job whose carried task is not stored yet once its insert lands', async () => {
      const inner = new MemoryStore();
      const { engine, executor, startWorker } = await setup({ store: inner });
      const task = await unstoredTask();
      let ran = 0;
      await startWorker(async () => {
        ran++;
        return ok;
      });
      await executor.submit(task);
      // The claim on the carried copy found no task; the job waits for the insert rather than being dropped.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(ran).toBe(0);
      expect(await inner.insert(task)).toEqual({ inserted: true });
      const done = await completed(engine, task.taskId);
      expect(done.attempts).toBe(1);
      expect(ran).toBe(1);
    });

    // A creation queues its job, then inserts; an insert that waited out a store outage lands after the worker first
    // looked for the task. The job is looked at again, not dropped, so the task is not left stored with no run.
    it('runs a job whose task is stored well after the job was queued (an insert that waited out an outage)', async () => {
      const inner = new MemoryStore();
      const { engine, executor, startWorker } = await setup({ store: inner });
      const task = await unstoredTask();
      const lines: Array<{ message: string; fields: Record<string, unknown> }> = [];
      let ran = 0;
      await startWorker(async () => {
        ran++;
        return ok;
      }, recordingLogger(lines));
      // Queued 8 s ago: past the short in-place wait for the insert.
      await executor.queue.add(
        TASK_JOB_NAME,
        { taskId: task.taskId, attempt: 1 },
        { jobId: taskJobId(task.taskId, 1), timestamp: Date.now() - 8_000 },
      );
      await eventually(() =>
        lines.some(
          (line) => line.message === 'task job handed back to the queue' && line.fields['taskId'] === task.taskId,
        ),
      );
      expect(await inner.insert(task)).toEqual({ inserted: true });
      const done = await completed(engine, task.taskId);
      expect(done.attempts).toBe(1);
      expect(ran).toBe(1);
    });

    it('drops a job whose task is still not stored long after the job was queued (its creation was refused)', async () => {
      const { executor, startWorker } = await setup();
      let ran = 0;
      await startWorker(async () => {
        ran++;
        return ok;
      });
      const taskId = 'never-stored';
      await executor.queue.add(
        TASK_JOB_NAME,
        { taskId, attempt: 1 },
        { jobId: taskJobId(taskId, 1), timestamp: Date.now() - 60_000 },
      );
      const job = await eventually(async () => {
        const found = await executor.queue.getJob(taskJobId(taskId, 1));
        return found?.finishedOn ? found : undefined;
      });
      expect(job.returnvalue).toMatchObject({ outcome: 'skipped', reason: 'the task no longer exists' });
      expect(ran).toBe(0);
    });

    it('fails the task with a clear statusMessage when Redis does not take its job', async () => {
      const engine = new TaskEngine({ store: new MemoryStore(), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
      const executor = new QueueExecutor({
        engine,
        connection: { host: '127.0.0.1', port: 1, retryStrategy: () => null, maxRetriesPerRequest: 0 },
        queueName: 'unreachable',
        enqueueTimeoutMs: 300,
      });
      engine.setExecutor(executor);
      await engine.start();
      cleanups.push(async () => {
        await executor.close().catch(() => {});
        await engine.close();
      });
      // The queue is told before the task is stored: nothing is left behind, and the caller learns why.
      const attempt = engine.create({ owner: 'o', request, dialect: 't' });
      await expect(attempt).rejects.toBeInstanceOf(QueueUnavailableError);
      await expect(attempt).rejects.toThrow(/^The task could not be queued for a worker: /);
      expect((await engine.list('o')).tasks).toEqual([]);
    });

    it('close() hands back a run that outlasts its timeout; recovery re-runs it on another worker', async () => {
      const { engine, startWorker } = await setup({ leaseMs: 300 });
      const aborts: unknown[] = [];
      const first = await startWorker(untilAborted(aborts));
      const { task } = await engine.create({ owner: 'o', request, dialect: 't', retrySafe: true });
      await eventually(() => first.activeTaskIds.includes(task.taskId));
      await first.close({ timeoutMs: 100 });
      expect(String(aborts[0])).toMatch(/shut down before the task finished/);
      // Handed back, not lost: still working, held by the stopped worker until its lease lapses.
      const held = await engine.get('o', task.taskId);
      expect(held.status).toBe('working');
      expect(held.runner).toBe(first.runnerId);
      await startWorker(async () => ok);
      await eventually(async () => (await engine.recover()).rerun === 1, 5000);
      const done = await engine.waitForTerminal(task.taskId);
      expect(done?.status).toBe('completed');
      expect(done?.attempts).toBe(2);
      expect(done?.recovery).toBe('rerun-after-crash');
    });
  });
}
