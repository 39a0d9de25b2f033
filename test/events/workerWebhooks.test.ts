// A queue worker's emits reach webhooks: the task runs (and emits) in a real worker process on the shared Redis store,
// the worker publishes its appends to the store's durable outbox, and the senders of two server instances deliver
// each event exactly once.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { queueExecutor } from '../../src/server/worker/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { isolatedQueue } from '../distributed/backends.js';
import { requireService } from '../helpers/services.js';
import { webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import { STAGE, startEventsServer, type EventsServer, authenticate } from './eventsServer.js';
import { eventsPeer } from './eventsPeer.js';

const WORKER = fileURLToPath(new URL('./fixtures/eventsWorker.mjs', import.meta.url));
/** The build the worker runs: `dist/`, or the output directory MCP_TASKS_TEST_DIST names. */
const dist = process.env['MCP_TASKS_TEST_DIST'] ?? fileURLToPath(new URL('../../dist', import.meta.url));
const built = existsSync(join(dist, 'src/events/WorkerEvents.js'));
const STATUS = 'io.github.mcp-tasks.task_status';

const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');

if (redisUrl) {
  const url = redisUrl;
  describe.skipIf(!built)('webhooks of events emitted in a queue worker process (Redis)', () => {
    const keyPrefix = `mcp-tasks-ev-worker:${randomUUID()}:`;
    const queue = isolatedQueue(url);
    const servers: Array<{ server: EventsServer; webhooks: OutboxWebhookDeliveries }> = [];
    let receiver: WebhookReceiver;
    let worker: ChildProcess;

    beforeAll(async () => {
      receiver = await webhookReceiver();
      for (let i = 0; i < 2; i++) {
        const store = new RedisStore({ url, keyPrefix });
        await store.init();
        const webhooks = new OutboxWebhookDeliveries({
          store: store.webhooks,
          policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
          limits: { pollMs: 100 },
        });
        await store.webhooks.init();
        const server = await startEventsServer(
          store,
          { webhooks },
          { authenticate, executor: queueExecutor({ redisUrl: url, queueName: queue.name }) },
        );
        webhooks.start();
        servers.push({ server, webhooks });
      }
      worker = spawn(process.execPath, [WORKER, url, keyPrefix, url, queue.name], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const [chunk] = (await once(worker.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
      expect(chunk.toString()).toContain('ready');
    }, 60_000);

    afterAll(async () => {
      if (worker && worker.exitCode === null) {
        worker.kill('SIGKILL');
        await once(worker, 'exit');
      }
      for (const { server, webhooks } of servers) {
        await webhooks.stop();
        await server.close();
      }
      await receiver?.close();
      await queue.dispose();
      const admin = new Redis(url);
      const keys = await admin.keys(`${keyPrefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      await admin.quit();
    });

    it('each event a worker emits, and its status changes, reach the subscription once; the task’s end terminates it', async () => {
      const alice = eventsPeer(servers[0]!.server.http.url, { authorization: 'Bearer alice' });
      const created = await alice.request('tools/call', { name: 'staged', arguments: { stages: 3, stageMs: 700 } });
      expect(created.error, JSON.stringify(created.error)).toBeUndefined();
      const taskId = created.result?.['taskId'] as string;
      const source = created.result?.['eventSource'] as Record<string, unknown>;
      const secret = generateWebhookSecret();
      for (const name of [STAGE, STATUS]) {
        const subscribed = await alice.request('events/subscribe', {
          name,
          arguments: source['input'],
          cursor: source['initialCursor'],
          delivery: { mode: 'webhook', url: receiver.url, secret },
        });
        expect(subscribed.error, JSON.stringify(subscribed.error)).toBeUndefined();
      }
      // Both subscriptions end with the task, which the worker finishes: a `terminated` envelope each.
      await expect
        .poll(() => receiver.deliveries().filter((d) => d.json['type'] === 'terminated').length, {
          timeout: 20_000,
          interval: 100,
        })
        .toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 500)); // any second delivery would come by now
      const events = receiver.deliveries().filter((d) => d.json['type'] !== 'terminated');
      for (const delivery of events) verifyWebhook(delivery.headers, delivery.body, secret);
      const ids = events.map((d) => String(d.headers['webhook-id']));
      expect(new Set(ids).size).toBe(ids.length);
      const stages = events.filter((d) => d.json['name'] === STAGE);
      expect(stages.map((d) => (d.json['data'] as { index: number }).index)).toEqual([0, 1, 2]);
      for (const delivery of events) expect(delivery.json['eventId']).toMatch(new RegExp(`^${taskId}:\\d+$`));
      // The worker's status entries, the terminal one among them, came through its publishing too.
      const statuses = events
        .filter((d) => d.json['name'] === STATUS)
        .map((d) => (d.json['data'] as { status: string }).status);
      expect(statuses).toContain('completed');
    });
  });
}
