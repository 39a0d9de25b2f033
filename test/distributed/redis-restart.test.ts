// Issue point 4, Redis restart: the store and the queue both in one Redis persisted with the append-only file
// (appendonly yes, appendfsync always, so nothing acknowledged is lost; redis-lost-writes.test.ts covers everysec).
// Killed with SIGKILL while tasks run, wait in the queue and wait for input, and restarted on the same data: every
// task completes, none is lost or left stuck, each runs once.
import { describe, expect, it } from 'vitest';

import { eventually } from '../helpers/rawWire.js';
import { core20251125 as wire } from './dialects.js';
import { useRedisCluster } from './redisCluster.js';
import { hasRedisServer } from './redisServer.js';
import { redisUrl, sleep, unique } from './suites.js';

/** Longer than the outage, so running tasks keep their leases across it. */
const LEASE_MS = 5000;

if (redisUrl && hasRedisServer()) {
  describe('Redis restarted with persistence: store and queue in one Redis', () => {
    // Four slots in all, so some tasks are still queued when Redis goes down.
    const fx = useRedisCluster({
      queue: 'restart',
      env: { MCP_TASKS_LEASE_MS: String(LEASE_MS), MCP_TASKS_WORKER_CONCURRENCY: '2' },
      appendfsync: 'always',
    });

    it('loses no task: running, queued, waiting for input, and created during the outage', async () => {
      const { redis, cluster, a, b } = fx;
      const labels = Array.from({ length: 8 }, (_, i) => unique(`kept-${i}`));
      const ids = new Map<string, string>();
      for (const label of labels) ids.set(label, await wire.create(a, 'slow_compute', { seconds: 1.5, label }));
      const filename = `${unique('asked')}.txt`;
      const asking = await wire.create(a, 'confirm_delete', { filename });
      await eventually(() => cluster.readToolEvents().filter((e) => e.event === 'start').length >= 3, 15_000);
      // Some tasks still wait in the queue.
      expect(cluster.readToolEvents().filter((e) => e.event === 'start').length).toBeLessThan(labels.length + 1);

      await redis.kill('SIGKILL');
      const duringLabel = unique('during');
      const during = wire.create(a, 'slow_compute', { seconds: 0.5, label: duringLabel });
      await sleep(1000);
      await redis.launch();
      ids.set(duringLabel, await during);

      for (const [label, taskId] of ids) {
        const outcome = await wire.result(b, taskId);
        expect(outcome.content, label).toEqual([
          { type: 'text', text: `Computed ${label} in ${label === duringLabel ? 0.5 : 1.5}s` },
        ]);
      }
      await cluster.awaitTask(asking, async () => (await wire.get(b, asking)).status === 'input_required', 15_000);
      const { outcome } = await wire.answerInput(b, asking, () => ({ action: 'accept', content: { confirm: true } }));
      expect(outcome.content).toEqual([{ type: 'text', text: `Deleted ${filename}` }]);
      for (const taskId of [...ids.values(), asking]) expect((await wire.get(a, taskId)).status).toBe('completed');
      // Each ran once: the outage was shorter than a lease, so no run was taken for dead.
      for (const label of ids.keys())
        expect(
          cluster.toolEventsFor(label).filter((e) => e.event === 'start'),
          label,
        ).toHaveLength(1);
    });
  });
}
