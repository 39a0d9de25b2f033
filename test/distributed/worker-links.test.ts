// A queue worker reuses instances of the author's server for its task runs (InternalLinkPool) and closes them when
// it closes, so a worker shut down gracefully leaves no instance (nor its timers and listeners) behind.
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp } from '../../src/server/index.js';
import { queueExecutor, runWorker } from '../../src/server/worker/index.js';
import { countingFactory } from '../helpers/countingFactory.js';
import { HttpPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { isolatedQueue } from './backends.js';
import { redisUrl } from './suites.js';

if (redisUrl) {
  const url = redisUrl;
  describe('a queue worker and the instances of the author server it reuses', () => {
    const queue = isolatedQueue(url);
    afterAll(() => queue.dispose());

    it('reuses one instance for consecutive tasks and closes it when the worker closes', async () => {
      const store = join(tempDir(), 'links.db');
      const { factory, counter } = countingFactory();
      const worker = await runWorker({ server: factory, store, redisUrl: url, queueName: queue.name });
      const tasks = await createMcpTasks({
        server: factory,
        tools: { echo: 'optional' },
        store,
        executor: queueExecutor({ redisUrl: url, queueName: queue.name }),
      });
      const http = await serveHttp(tasks, { port: 0 });
      try {
        const peer = new HttpPeer(http.url);
        await peer.initialize();
        // The HTTP session's own instance is made; the worker's come after.
        const before = counter.instances;
        for (const text of ['one', 'two', 'three']) {
          const created = await peer.request('tools/call', { name: 'echo', arguments: { text }, task: {} });
          const taskId = (created.result?.['task'] as { taskId: string }).taskId;
          const result = await peer.request('tasks/result', { taskId });
          expect(result.result?.['content']).toEqual([{ type: 'text', text }]);
        }
        // Consecutive runs share one instance of the factory.
        expect(counter.instances - before).toBe(1);
        await peer.close();
      } finally {
        await http.close();
        await tasks.close();
      }
      // The worker's kept instance is closed with the worker, not before.
      const closedBefore = counter.closed;
      await worker.close();
      expect(counter.closed - closedBefore).toBe(1);
    }, 60_000);
  });
}
