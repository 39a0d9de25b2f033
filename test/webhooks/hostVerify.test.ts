import { once } from 'node:events';
import { createServer } from 'node:http';

import { generateWebhookSecret, verifyWebhook, WebhookVerificationError } from 'mcp-tasks/client';
import { afterEach, expect, it } from 'vitest';

import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { MemoryStore } from '../../src/stores/memory/index.js';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

// The host's side, as docs/webhooks.md shows it: verify with the subscription's secret, answer the handshake, dedup.
it('a host verifies deliveries with mcp-tasks/client and refuses a forged one', async () => {
  const secret = generateWebhookSecret();
  const seen = new Map<string, unknown>();
  let refused = 0;
  const host = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const delivery = verifyWebhook(req.headers, Buffer.concat(chunks), secret);
        const payload = delivery.payload as { type?: string; challenge?: string };
        if (payload.type === 'verification') return res.end(JSON.stringify({ challenge: payload.challenge }));
        seen.set(delivery.id, payload);
        res.writeHead(204).end();
      } catch (error) {
        expect(error).toBeInstanceOf(WebhookVerificationError);
        refused++;
        res.writeHead(401).end();
      }
    });
  });
  host.listen(0, '127.0.0.1');
  await once(host, 'listening');
  const origin = `http://127.0.0.1:${(host.address() as { port: number }).port}`;
  cleanup.push(() => {
    host.closeAllConnections();
    host.close();
  });

  const webhooks = new OutboxWebhookDeliveries({
    store: new MemoryStore().webhooks,
    policy: new CallbackPolicy({ allowOrigins: [origin] }),
    limits: { pollMs: 20 },
  });
  cleanup.push(() => webhooks.stop());
  await webhooks.subscribe({
    owner: 'alice',
    name: 'io.github.mcp-tasks.task_status',
    arguments: {},
    url: `${origin}/hooks`,
    secret,
    cursor: null,
  });
  webhooks.start();
  await webhooks.publish({
    occurrence: {
      eventId: 't-9:0',
      name: 'io.github.mcp-tasks.task_status',
      timestamp: new Date().toISOString(),
      data: { status: 'completed' },
    },
    owner: 'alice',
    scope: 't-9',
    cursor: 'c1',
  });
  await expect.poll(() => seen.get('t-9:0')).toMatchObject({ eventId: 't-9:0', data: { status: 'completed' } });

  // A forged delivery (another secret) is refused.
  const forged = await fetch(`${origin}/hooks`, {
    method: 'POST',
    headers: {
      'webhook-id': 'x',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
    },
    body: '{}',
  });
  expect(forged.status).toBe(401);
  expect(refused).toBe(1);
});
