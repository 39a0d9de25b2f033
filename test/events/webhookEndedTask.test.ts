// A webhook subscription to a task that has ended already: the retained events are delivered, then `terminated`,
// and the subscription is gone; a re-subscribe while it is ending is answered and ends the same way. A task removed
// while it runs ends its subscriptions with the missing task's error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { TaskEngine } from '../../src/engine/index.js';
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
  /** A subscribe (and its repeats) of the task's stage events to `url`, from its initial cursor, with one secret. */
  function subscriber(
    alice: ReturnType<typeof eventsPeer>,
    source: { input: unknown; initialCursor: string },
    url: string,
  ) {
    const secret = generateWebhookSecret();
    const subscribe = () =>
      alice.request('events/subscribe', {
        name: STAGE,
        arguments: source.input,
        cursor: source.initialCursor,
        delivery: { mode: 'webhook', url, secret },
      });
    return { secret, subscribe };
  }
  /** Alice's task of one stage that then waits at `gate`, once it waits there. */
  async function runningTask(gate: string) {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', { name: 'staged', arguments: { stages: 1, stageMs: 1, gate } });
    const taskId = created.result?.['taskId'] as string;
    const source = created.result?.['eventSource'] as { input: unknown; initialCursor: string };
    await eventually(() => gates.has(gate));
    return { alice, taskId, source };
  }
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
    const { secret, subscribe } = subscriber(alice, source, receiver.url);
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
    const { alice, taskId, source } = await runningTask('v65-removed');
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

  // spec TS8: an ending the subscription never heard (here the task is cancelled by an engine that publishes nothing,
  // as a crash between the status entry and its outbox row would leave it) is healed by the host's next refresh.
  it('a refresh of a subscription whose task ended unheard replays what it missed and ends it', async () => {
    const { alice, taskId, source } = await runningTask('ts8-unheard');
    const { subscribe } = subscriber(alice, source, `${receiver.url}?unheard`);
    const before = receiver.deliveries().length;
    expect((await subscribe()).error).toBeUndefined();
    expect((await receiver.waitFor(before + 1, 10_000)).slice(before).map((entry) => entry.json['data'])).toEqual([
      { index: 0, of: 1 },
    ]);
    const silent = new TaskEngine({ store, sweepIntervalMs: 0, recoveryIntervalMs: 0, wakeIntervalMs: 0 });
    const owner = (await store.get(taskId))?.owner as string;
    await silent.cancel(owner, taskId);
    // Past the drain a subscription grants a task's last entries (2 s), nothing came.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(receiver.deliveries()).toHaveLength(before + 1);

    const refreshed = await subscribe();
    expect(refreshed.error).toBeUndefined();
    await eventually(() =>
      receiver
        .deliveries()
        .some(
          (entry) =>
            entry.json['type'] === 'terminated' &&
            entry.json['error'] &&
            JSON.stringify(entry.json['error']).includes(taskId),
        ),
    );
    const arrived = receiver.deliveries().slice(before);
    // The stage event was delivered already: replayed from the host's cursor it may come again (once its row was
    // compacted), under the same webhook-id; then the ending.
    const kinds = arrived.map((entry) => entry.json['type'] ?? entry.json['data']);
    expect(kinds.at(-1)).toBe('terminated');
    expect(arrived.at(-1)?.json['error']).toMatchObject({
      data: { reason: 'task_terminal', taskId, status: 'cancelled' },
    });
    const ids = arrived
      .filter((entry) => entry.json['type'] !== 'terminated')
      .map((entry) => entry.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    gates.get('ts8-unheard')?.();
  });
});
