// A webhook subscription to a task that has ended already: the retained events are delivered, then `terminated`,
// and the subscription is gone; a re-subscribe while it is ending is answered and ends the same way. A task removed
// while it runs ends its subscriptions with the missing task's error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { eventually } from '../helpers/rawWire.js';
import { inLogOrder, webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import { gates, STAGE, startEventsServer, type EventsServer, authenticate } from './eventsServer.js';
import { eventsPeer } from './eventsPeer.js';

describe('a webhook subscription to a task that has ended', () => {
  let receiver: WebhookReceiver;
  let webhooks: OutboxWebhookDeliveries;
  let server: EventsServer;
  const store = new MemoryStore();
  beforeAll(async () => {
    receiver = await webhookReceiver();
    webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
      limits: { pollMs: 20 },
    });
    server = await startEventsServer(store, { webhooks }, { authenticate });
    webhooks.start();
  });
  afterAll(async () => {
    await server?.close();
    await webhooks?.stop();
    await receiver?.close();
  });

  // spec TS8, §16.4: retained events are served, then the ending, on webhook as on poll.
  it('delivers its retained events, then terminated with the task’s status, and removes the subscription', async () => {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', { name: 'staged', arguments: { stages: 2, stageMs: 1 } });
    const taskId = created.result?.['taskId'] as string;
    const source = created.result?.['eventSource'] as { input: unknown; initialCursor: string };
    await eventually(async () => {
      const got = await alice.request('tasks/get', { taskId });
      return (got.result?.['status'] ?? (got.result?.['task'] as { status?: string })?.status) === 'completed';
    });
    const secret = generateWebhookSecret();
    const subscribe = () =>
      alice.request('events/subscribe', {
        name: STAGE,
        arguments: source.input,
        cursor: source.initialCursor,
        delivery: { mode: 'webhook', url: receiver.url, secret },
      });
    const subscribed = await subscribe();
    expect(subscribed.error).toBeUndefined();
    const id = subscribed.result?.['id'] as string;
    // Asked again while it is ending: the same subscription, which still ends (its `terminated` is sent once).
    const again = await subscribe();
    expect(again.result?.['id']).toBe(id);

    const arrived = inLogOrder(await receiver.waitFor(3, 10_000));
    for (const entry of arrived) expect(() => verifyWebhook(entry.headers, entry.body, secret)).not.toThrow();
    expect(arrived.map((entry) => (entry.json['type'] === 'terminated' ? 'terminated' : entry.json['data']))).toEqual([
      { index: 0, of: 2 },
      { index: 1, of: 2 },
      'terminated',
    ]);
    expect(arrived[2]?.json['error']).toEqual({
      code: -32011,
      message: 'Task ended',
      data: { kind: 'event', reason: 'task_terminal', taskId, status: 'completed' },
    });
    // Once `terminated` is delivered the subscription is removed: unsubscribing finds none.
    await eventually(async () => {
      const gone = await alice.request('events/unsubscribe', {
        name: STAGE,
        arguments: source.input,
        delivery: { url: receiver.url },
      });
      return gone.error !== undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.deliveries()).toHaveLength(3);
  });
  // spec V65: the access a subscription rests on is its task; a task removed while running ends it at once.
  it('ends the subscriptions of a task removed while it runs with the missing task’s error', async () => {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', {
      name: 'staged',
      arguments: { stages: 1, stageMs: 1, gate: 'v65-removed' },
    });
    const taskId = created.result?.['taskId'] as string;
    const source = created.result?.['eventSource'] as { input: unknown; initialCursor: string };
    await eventually(() => gates.has('v65-removed'));
    const before = receiver.deliveries().length;
    const secret = generateWebhookSecret();
    const subscribed = await alice.request('events/subscribe', {
      name: STAGE,
      arguments: source.input,
      cursor: source.initialCursor,
      delivery: { mode: 'webhook', url: `${receiver.url}?v65`, secret },
    });
    expect(subscribed.error).toBeUndefined();
    const owner = (await store.get(taskId))?.owner as string;
    await server.tasks.engine.delete(owner, taskId);
    const arrived = (await receiver.waitFor(before + 2, 10_000)).slice(before);
    expect(arrived.map((entry) => entry.json['type'] ?? entry.json['data'])).toEqual([
      { index: 0, of: 1 },
      'terminated',
    ]);
    expect(arrived[1]?.json['error']).toEqual({
      code: -32011,
      message: 'Task not found',
      data: { kind: 'event', reason: 'task_not_found', taskId },
    });
    gates.get('v65-removed')();
  });
});
