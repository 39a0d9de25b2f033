// Progress from tools running in queue workers reaches the requestor (spec R55 R56): two fixture servers and one
// fixture worker as separate processes on one shared store; the requestor is connected to one server, the tool runs
// in the worker, and its progress travels through the store to that server, which forwards it with the original token.
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, type HttpPeer, type Message } from '../helpers/rawWire.js';
import { isolatedQueue, type StoreBackend } from './backends.js';
import { Cluster } from './cluster.js';
import { core20251125 } from './dialects.js';
import { backends, redisUrl, sleep, unique } from './suites.js';

if (redisUrl) {
  const queueRedis = redisUrl;
  for (const [storeName, openBackend] of backends(10, { sqlite: true })) {
    describe(`progress relay from a queue worker on the ${storeName} store`, () => {
      let backend: StoreBackend;
      let queue: ReturnType<typeof isolatedQueue>;
      let cluster: Cluster;
      let requestor: HttpPeer;

      beforeAll(async () => {
        backend = await openBackend();
        queue = isolatedQueue(queueRedis);
        cluster = await Cluster.start({ store: backend.spec, redisUrl: queueRedis, queue: queue.name, workers: 1 });
        // The requestor talks to server 1 only; server 0 exists so that "the" server is one of several.
        requestor = await cluster.peer(1);
        await core20251125.initialize(requestor);
        await (requestor as unknown as { openNotificationStream(): Promise<void> }).openNotificationStream();
      });
      afterAll(async () => {
        await cluster?.close();
        await queue?.dispose();
        await backend?.dispose();
      });

      it('forwards the worker’s progress with the original token, in order, and nothing after the end', async () => {
        const label = unique('progress');
        const token = unique('token');
        const created = await requestor.request('tools/call', {
          name: 'slow_compute',
          arguments: { seconds: 2, label },
          task: {},
          _meta: { progressToken: token },
        });
        const taskId = (created.result?.['task'] as { taskId: string }).taskId;
        const outcome = await requestor.request('tasks/result', { taskId });
        expect(outcome.result?.['content']).toEqual([{ type: 'text', text: `Computed ${label} in 2s` }]);
        const endedAt = Date.now();
        // The tool ran in the worker's process, not in a server.
        const started = await eventually(() => cluster.toolEventsFor(label).find((e) => e.event === 'start'));
        expect(cluster.workerWithPid(started.pid)).toBeDefined();
        const mine = (): Message[] =>
          requestor.notifications.filter(
            (n) => n.method === 'notifications/progress' && n.params?.['progressToken'] === token,
          );
        // A report read just before the completion may still be on its way when the result arrives.
        await sleep(300);
        const seen = mine();
        // 8 steps over 2 s, throttled to one report per 250 ms: several arrive, the latest of each window (merged
        // further on a loaded machine, hence a loose bound).
        expect(seen.length).toBeGreaterThanOrEqual(2);
        const values = seen.map((n) => n.params?.['progress'] as number);
        for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1] as number);
        for (const n of seen) {
          expect(n.params?.['total']).toBe(8);
          expect(n.params?.['message']).toMatch(new RegExp(`^(computing ${label} \\(\\d/8\\)|done)$`));
        }
        // spec R56: nothing once the task has ended.
        await sleep(1000);
        expect(mine()).toHaveLength(seen.length);
        expect(Date.now() - endedAt).toBeGreaterThanOrEqual(1000);
        const other = await cluster.peer(0);
        await core20251125.initialize(other);
        expect(other.notifications.filter((n) => n.method === 'notifications/progress')).toEqual([]);
      });

      it('SEP-1686: forwards the worker’s progress on the original request until its response', async () => {
        const taskId = randomUUID();
        const token = unique('sep-token');
        const label = unique('sep-progress');
        const response = await requestor.request(
          'tools/call',
          {
            name: 'slow_compute',
            arguments: { seconds: 2, label },
            _meta: { 'modelcontextprotocol.io/task': { taskId }, progressToken: token },
          },
          { id: `sep-${taskId}` },
        );
        expect(response.result?.['content']).toEqual([{ type: 'text', text: `Computed ${label} in 2s` }]);
        const mine = () =>
          requestor.notifications.filter(
            (n) => n.method === 'notifications/progress' && n.params?.['progressToken'] === token,
          );
        await sleep(300);
        const values = mine().map((n) => n.params?.['progress'] as number);
        // Reports merge under load (the latest wins), so only a loose lower bound.
        expect(values.length).toBeGreaterThanOrEqual(2);
        for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1] as number);
        await sleep(500);
        expect(mine()).toHaveLength(values.length);
      });

      it('sends no progress for a task created without a progress token', async () => {
        const label = unique('silent');
        const created = await requestor.request('tools/call', {
          name: 'slow_compute',
          arguments: { seconds: 1, label },
          task: {},
        });
        const taskId = (created.result?.['task'] as { taskId: string }).taskId;
        const before = requestor.notifications.filter((n) => n.method === 'notifications/progress').length;
        await requestor.request('tasks/result', { taskId });
        await sleep(300);
        expect(requestor.notifications.filter((n) => n.method === 'notifications/progress')).toHaveLength(before);
      });
    });
  }
}
