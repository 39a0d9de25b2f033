// Issue point 4, with real processes and real signals: kill -9 of the worker running a task (re-run elsewhere when
// retry-safe, otherwise failed with a clear statusMessage, within lease + recovery interval), kill -9 of a server
// instance (running tasks unaffected), and SIGTERM of a worker (finishes its task, or hands it back after its
// shutdown timeout).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, type HttpPeer } from '../helpers/rawWire.js';
import { isolatedQueue, type StoreBackend } from './backends.js';
import { Cluster } from './cluster.js';
import { core20251125 as wire } from './dialects.js';
import { backends, redisUrl, unique } from './suites.js';

/** Lease of a running task; recovery runs every third of a lease in every process, so a dead worker is noticed within 2 leases. */
const LEASE_MS = 1000;
const DETECTION_BOUND_MS = 2 * LEASE_MS;
/** Process start, queue pickup and polling on top of the bound. */
const SLACK_MS = 3000;

if (redisUrl) {
  const queueRedis = redisUrl;
  for (const [storeName, openBackend] of backends(2, { sqlite: true })) {
    describe(`failures with 2 servers and 2 workers on the ${storeName} store`, () => {
      let backend: StoreBackend;
      let queue: ReturnType<typeof isolatedQueue>;
      let cluster: Cluster;
      let a: HttpPeer;
      let b: HttpPeer;

      beforeAll(async () => {
        backend = await openBackend();
        queue = isolatedQueue(queueRedis);
        cluster = await Cluster.start({
          store: backend.spec,
          redisUrl: queueRedis,
          queue: queue.name,
          env: { MCP_TASKS_LEASE_MS: String(LEASE_MS) },
        });
        a = await cluster.peer(0);
        b = await cluster.peer(1);
        await wire.initialize(a);
        await wire.initialize(b);
      });
      afterAll(async () => {
        await cluster?.close();
        await queue?.dispose();
        await backend?.dispose();
      });

      /** Two live workers again after a test took one down. */
      const refill = async () => {
        while (cluster.liveWorkers.length < 2) await cluster.addWorker();
      };

      it('kill -9 of the worker running a retry-safe task: another worker re-runs it to completion', async () => {
        await refill();
        const label = unique('rerun');
        const taskId = await wire.create(a, 'slow_compute', { seconds: 2, label });
        const first = await cluster.runnerOf(taskId);
        await eventually(() => cluster.toolEventsFor(label).some((e) => e.event === 'start' && e.pid === first.pid));
        const killedAt = Date.now();
        expect((await first.kill('SIGKILL')).signal).toBe('SIGKILL');

        const second = await cluster.runnerOf(taskId, [first]);
        const restartedAt = Date.now();
        expect(second).not.toBe(first);
        expect(restartedAt - killedAt).toBeLessThan(DETECTION_BOUND_MS + SLACK_MS);
        // Never failed on the way: the re-run is visible as working with a recovery message.
        const during = await wire.get(b, taskId);
        expect(['working', 'completed']).toContain(during.status);
        const outcome = await wire.result(b, taskId);
        expect(outcome.content).toEqual([{ type: 'text', text: `Computed ${label} in 2s` }]);
        const starts = cluster.toolEventsFor(label).filter((e) => e.event === 'start');
        expect(starts.map((e) => e.pid)).toEqual([first.pid, second.pid]);
      });

      it('kill -9 of the worker running a task that is not retry-safe: failed with a clear statusMessage', async () => {
        await refill();
        const filename = `${unique('no-retry')}.txt`;
        const taskId = await wire.create(a, 'confirm_delete', { filename });
        const runner = await cluster.runnerOf(taskId);
        await eventually(async () => (await wire.get(b, taskId)).status === 'input_required', 15_000);
        const killedAt = Date.now();
        await runner.kill('SIGKILL');

        const failed = await eventually(
          async () => {
            const view = await wire.get(b, taskId);
            return view.status === 'failed' ? view : undefined;
          },
          DETECTION_BOUND_MS + SLACK_MS + 5000,
        );
        expect(Date.now() - killedAt).toBeLessThan(DETECTION_BOUND_MS + SLACK_MS);
        expect(failed.statusMessage).toMatch(/stopped renewing its lease before recording an outcome/);
        expect(failed.statusMessage).toMatch(/not re-run because it is not marked safe to retry/);
        const outcome = await wire.result(a, taskId);
        expect(outcome.error?.message).toMatch(/stopped renewing its lease before recording an outcome/);
        // It was not run a second time.
        const starts = cluster
          .readToolEvents()
          .filter((e) => e.event === 'start' && e.arguments['filename'] === filename);
        expect(starts).toHaveLength(1);
      });

      it('kill -9 of a server instance leaves the tasks it created running; they complete and are read via B', async () => {
        await refill();
        await cluster.addServer();
        const doomed = await cluster.peer(2);
        await wire.initialize(doomed);
        const label = unique('orphan');
        const taskId = await wire.create(doomed, 'slow_compute', { seconds: 2, label });
        await eventually(() => cluster.toolEventsFor(label).some((e) => e.event === 'start'));
        const killedAt = Date.now();
        await cluster.killServer(2);
        const outcome = await wire.result(b, taskId);
        expect(outcome.content).toEqual([{ type: 'text', text: `Computed ${label} in 2s` }]);
        // It was running when its server died, and it ran once.
        const events = cluster.toolEventsFor(label);
        expect(events.find((e) => e.event === 'end')?.time).toBeGreaterThan(killedAt);
        expect(events.filter((e) => e.event === 'start')).toHaveLength(1);
      });

      it('SIGTERM of a worker lets its running task finish before it exits', async () => {
        await refill();
        const label = unique('graceful');
        const taskId = await wire.create(a, 'slow_compute', { seconds: 1.5, label });
        const runner = await cluster.runnerOf(taskId);
        await eventually(() => cluster.toolEventsFor(label).some((e) => e.event === 'start'));
        const exit = await runner.kill('SIGTERM');
        expect(exit.code).toBe(0);
        // The task finished on that worker before it exited, once.
        const events = cluster.toolEventsFor(label);
        expect(events.filter((e) => e.event === 'end').map((e) => e.pid)).toEqual([runner.pid]);
        expect(events.filter((e) => e.event === 'start')).toHaveLength(1);
        expect((await wire.get(b, taskId)).status).toBe('completed');
      });

      it('SIGTERM of a worker whose task outlasts the shutdown timeout hands the task back; it re-runs elsewhere', async () => {
        await refill();
        // Only a worker with a short shutdown timeout runs while the task starts.
        for (const worker of cluster.liveWorkers) await worker.kill('SIGTERM');
        const impatient = await cluster.addWorker({ MCP_TASKS_SHUTDOWN_TIMEOUT_MS: '300' });
        const label = unique('handback');
        const taskId = await wire.create(a, 'slow_compute', { seconds: 2, label });
        await eventually(() => cluster.toolEventsFor(label).some((e) => e.event === 'start'));
        expect(impatient.logged('task started', taskId)).toBe(true);

        const stoppedAt = Date.now();
        expect((await impatient.kill('SIGTERM')).code).toBe(0);
        expect(Date.now() - stoppedAt).toBeLessThan(2000);
        expect(impatient.logged('task handed back at shutdown', taskId), JSON.stringify(impatient.logs)).toBe(true);
        // The tool's own signal saw the hand-back.
        expect(cluster.toolEventsFor(label).some((e) => e.event === 'abort' && e.pid === impatient.pid)).toBe(true);
        expect((await wire.get(b, taskId)).status).toBe('working');

        // The servers' recovery queues the run again once the lease lapses; the next worker to start takes it.
        const successor = await cluster.addWorker();
        const readyAt = Date.now();
        expect(await cluster.runnerOf(taskId, [impatient])).toBe(successor);
        expect(Date.now() - stoppedAt).toBeLessThan(Math.max(DETECTION_BOUND_MS, readyAt - stoppedAt) + SLACK_MS);
        const outcome = await wire.result(b, taskId);
        expect(outcome.content).toEqual([{ type: 'text', text: `Computed ${label} in 2s` }]);
      });
    });
  }
}
