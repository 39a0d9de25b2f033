// Durable workflow tools on the queue executor: the step journal and the durable timers in the shared store, runs
// taken by whichever fixture worker BullMQ hands the job to.
import { join } from 'node:path';

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
        env: { MCP_TASKS_LEASE_MS: '800', MCP_TASKS_STEP_LOG: log },
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
      const slept = Number(/Slept (\d+)ms/.exec(JSON.stringify(outcome.content))?.[1]);
      expect(slept).toBeGreaterThanOrEqual(2500);
      // Nothing waited for a lease: the durable timer queued the next run at the wake time (loose bound).
      expect(Date.now() - started).toBeLessThan(2500 + 3000);
      await cluster.addWorker();
    });
  });
}
