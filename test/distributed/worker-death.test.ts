// With the default lease, recovery scan and BullMQ lock settings (nothing tuned down, as in production): a worker
// killed with SIGKILL in the middle of a retry-safe task has that task taken over and finished by the other worker.
// How soon is a figure of `npm run bench:recovery`, not an assertion here; the test only bounds it generously.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, type HttpPeer } from '../helpers/rawWire.js';
import { isolatedQueue, redisBackend, type StoreBackend } from './backends.js';
import { Cluster } from './cluster.js';
import { core20251125 as wire } from './dialects.js';
import { redisUrl, unique } from './suites.js';

if (redisUrl) {
  const url = redisUrl;
  describe('a killed worker on the Redis store with default settings', () => {
    let backend: StoreBackend;
    let queue: ReturnType<typeof isolatedQueue>;
    let cluster: Cluster;
    let peer: HttpPeer;

    beforeAll(async () => {
      backend = await redisBackend(url, 12);
      queue = isolatedQueue(url);
      cluster = await Cluster.start({ store: backend.spec, redisUrl: url, queue: queue.name, servers: 1 });
      peer = await cluster.peer(0);
      await wire.initialize(peer);
    }, 60_000);
    afterAll(async () => {
      await cluster?.close();
      await queue?.dispose();
      await backend?.dispose();
    });

    it('has its running task resumed by the other worker, which finishes it', { timeout: 90_000 }, async () => {
      const label = unique('default-lease');
      const taskId = await wire.create(peer, 'slow_compute', { seconds: 3, label });
      const first = await cluster.runnerOf(taskId);
      await eventually(() => cluster.toolEventsFor(label).some((e) => e.event === 'start' && e.pid === first.pid));
      expect((await first.kill('SIGKILL')).signal).toBe('SIGKILL');

      // Generous: the defaults bound the takeover at about 8 s after the kill, plus process and queue latency.
      const second = await eventually(
        () => cluster.workers.find((w) => w !== first && w.logged('task started', taskId)),
        60_000,
      );
      expect(second.alive).toBe(true);
      const outcome = await wire.result(peer, taskId);
      expect(outcome.content).toEqual([{ type: 'text', text: `Computed ${label} in 3s` }]);
      const starts = cluster.toolEventsFor(label).filter((e) => e.event === 'start');
      expect(starts.map((e) => e.pid)).toEqual([first.pid, second.pid]);
      expect(
        cluster
          .toolEventsFor(label)
          .filter((e) => e.event === 'end')
          .map((e) => e.pid),
      ).toEqual([second.pid]);
    });
  });
}
