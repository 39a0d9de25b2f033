// A Redis (store and queue) restarted without its latest writes: with `appendfsync everysec`, Redis postpones writing
// its append-only file while a slow fsync runs (a busy disk) and still answers, so a kill -9 then loses up to two
// seconds of acknowledged writes; a failover to a lagging replica does the same. The file is cut just before the
// write that asked a question, and the run waiting for its answer asks again instead of waiting forever.
import { describe, expect, it } from 'vitest';

import { eventually } from '../helpers/rawWire.js';
import { cutAofBefore } from './aofTail.js';
import { core20251125 as wire } from './dialects.js';
import { useRedisCluster } from './redisCluster.js';
import { hasRedisServer } from './redisServer.js';
import { redisUrl, unique } from './suites.js';

if (redisUrl && hasRedisServer()) {
  describe('Redis restarted without its latest writes: store and queue in one Redis', () => {
    // The lease is longer than the outage, so the run keeps it across.
    const fx = useRedisCluster({ queue: 'lost-writes', env: { MCP_TASKS_LEASE_MS: '10000' } });

    it('asks again a question the store lost, and the task completes with the answer', async () => {
      const { redis, cluster, a, b } = fx;
      const filename = `${unique('lost')}.txt`;
      const taskId = await wire.create(a, 'confirm_delete', { filename });
      await eventually(async () => (await wire.get(a, taskId)).status === 'input_required', 15_000);

      // The workers are held while Redis restarts, so the store is read back before any run can ask again.
      for (const worker of cluster.workers) worker.child.kill('SIGSTOP');
      try {
        await redis.kill('SIGKILL');
        const asked = (args: string[]) =>
          args.some((arg) => arg.includes(taskId)) && args.some((arg) => arg.includes('input_required'));
        expect(cutAofBefore(redis.dir, asked)).toBeGreaterThan(0);
        await redis.launch();
        // Back as it was before the question: the task is `working` and holds no request.
        await eventually(async () => (await wire.get(b, taskId).catch(() => undefined))?.status === 'working', 15_000);
      } finally {
        for (const worker of cluster.workers) worker.child.kill('SIGCONT');
      }

      // Its run notices and asks again.
      await cluster.awaitTask(taskId, async () => (await wire.get(b, taskId)).status === 'input_required', 20_000);
      const { outcome, requests } = await wire.answerInput(b, taskId, () => ({
        action: 'accept',
        content: { confirm: true },
      }));
      expect(outcome.content).toEqual([{ type: 'text', text: `Deleted ${filename}` }]);
      expect(requests).toHaveLength(1);
      expect((await wire.get(a, taskId)).status).toBe('completed');
      // The run noticed, either on reading its task back without the question, or on the read that failed while
      // Redis was down (its retry stores the question again under the same key).
      const noticed = cluster.workers.filter(
        (worker) =>
          worker.logged('input request lost by the task store: asked again', taskId) ||
          worker.logged('input wait lost the task store; retrying', taskId),
      );
      expect(noticed, cluster.logsOf(taskId)).toHaveLength(1);
    });
  });
}
