// Durable workflow tools on the queue executor: the step journal and the durable timers in the shared store, runs
// taken by whichever fixture worker BullMQ hands the job to.
import { join } from 'node:path';

import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, type HttpPeer } from '../helpers/rawWire.js';
import { logged as loggedIn } from '../helpers/stepLog.js';
import { tempDir } from '../helpers/tmp.js';
import { isolatedQueue, redisBackend, type StoreBackend } from './backends.js';
import { Cluster } from './cluster.js';
import { core20251125 as wire } from './dialects.js';
import { redisUrl } from './suites.js';

const log = join(tempDir(), 'steps.log');

const logged = (taskId: string) => loggedIn(log, taskId);

/** The wake-at index poll of every process: far slower than any test, so only the queue's delayed jobs wake tasks. */
const SLOW_POLL_MS = 600_000;

/** The milliseconds a durable_sleep outcome reports it slept. */
const sleptOf = (content: unknown) => Number(/Slept (\d+)ms/.exec(JSON.stringify(content))?.[1]);

if (redisUrl) {
  const url = redisUrl;
  describe('durable workflow tools on the queue executor (Redis store, BullMQ, 2 workers)', () => {
    let backend: StoreBackend;
    let queue: ReturnType<typeof isolatedQueue>;
    let cluster: Cluster;
    let peer: HttpPeer;

    beforeAll(async () => {
      backend = await redisBackend(url, 11);
      queue = isolatedQueue(url);
      cluster = await Cluster.start({
        store: backend.spec,
        redisUrl: url,
        queue: queue.name,
        servers: 1,
        workers: 2,
        env: { MCP_TASKS_LEASE_MS: '800', MCP_TASKS_STEP_LOG: log, MCP_TASKS_WAKE_INTERVAL_MS: String(SLOW_POLL_MS) },
      });
      peer = await cluster.peer(0);
      await wire.initialize(peer);
    });
    afterAll(async () => {
      await cluster?.close();
      await queue?.dispose();
      await backend?.dispose();
    });

    it('kill -9 of the worker in the middle of journaled_steps: the other one resumes, at most one step repeated', async () => {
      const taskId = await wire.create(peer, 'journaled_steps', { steps: 8, stepMs: 150, label: 'queued' });
      const first = await cluster.runnerOf(taskId);
      await eventually(() => logged(taskId).length >= 3);
      await first.kill('SIGKILL');
      const outcome = await wire.result(peer, taskId);
      expect(JSON.stringify(outcome.content)).toContain('queued');
      const counts = new Map<string, number>();
      for (const id of logged(taskId)) counts.set(id, (counts.get(id) ?? 0) + 1);
      expect([...counts.keys()].sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
      expect([...counts.values()].filter((count) => count > 1).length).toBeLessThanOrEqual(1);
      await cluster.addWorker();
    });

    it('durable_sleep holds no worker; after the worker that started it is killed, the other finishes it on time', async () => {
      const taskId = await wire.create(peer, 'durable_sleep', { ms: 2500, label: 'queued-nap' });
      const first = await cluster.runnerOf(taskId);
      await eventually(() => logged(taskId).includes('before'));
      const started = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await first.kill('SIGKILL');
      expect((await wire.get(peer, taskId)).status).toBe('working');
      const outcome = await wire.result(peer, taskId);
      expect(JSON.stringify(outcome.content)).toMatch(/Slept \d+ms for queued-nap/);
      expect(sleptOf(outcome.content)).toBeGreaterThanOrEqual(2500);
      // Nothing waited for a lease: the durable timer queued the next run at the wake time (loose bound).
      expect(Date.now() - started).toBeLessThan(2500 + 3000);
      await cluster.addWorker();
    });

    /** The delayed wake job of a task parked by a worker, once there is one. */
    const wakeJobOf = async (taskId: string) => {
      const jobs = new Queue(queue.name, { connection: { url } });
      try {
        return await eventually(async () =>
          (await jobs.getDelayed()).find((delayed) => delayed.name === 'wake' && delayed.data.taskId === taskId),
        );
      } finally {
        await jobs.close();
      }
    };

    it('the durable timer is a BullMQ delayed job: the sleep ends on time with the index poll at ten minutes', async () => {
      const taskId = await wire.create(peer, 'durable_sleep', { ms: 2000, label: 'delayed-job' });
      const job = await wakeJobOf(taskId);
      expect(job.id).toBe(`${taskId}-wake-${job.data.wakeAt}`);
      const outcome = await wire.result(peer, taskId);
      const slept = sleptOf(outcome.content);
      expect(slept).toBeGreaterThanOrEqual(2000);
      // The run resumed within a small margin of the wake time (loose: the machine is shared), not at the next poll.
      expect(slept - 2000).toBeLessThan(1500);
    });

    it('kill -9 of the worker that parked a sleep: the delayed job wakes it on the other worker on time', async () => {
      const taskId = await wire.create(peer, 'durable_sleep', { ms: 3000, label: 'orphaned-nap' });
      const first = await cluster.runnerOf(taskId);
      // Parked: the worker has queued the wake job and holds nothing for the task.
      await wakeJobOf(taskId);
      // No process was started since: none has read the index, so only the job left in Redis can wake the task.
      await first.kill('SIGKILL');
      const outcome = await wire.result(peer, taskId);
      const slept = sleptOf(outcome.content);
      expect(slept).toBeGreaterThanOrEqual(3000);
      expect(slept - 3000).toBeLessThan(1500);
      const resumedBy = await cluster.runnerOf(taskId, [first]);
      expect(resumedBy.alive).toBe(true);
      await cluster.addWorker();
    });
  });
}
