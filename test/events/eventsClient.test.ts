import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, TaskRpcError } from '../../src/client/index.js';
import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { tempDir } from '../helpers/tmp.js';
import { webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import { gates, NOTE, STAGE, startEventsServer, type EventsServer, authenticate } from './eventsServer.js';

const STATUS = 'io.github.mcp-tasks.task_status';

describe('client.events(): the Events requests for any type', () => {
  let server: EventsServer;
  let webhooks: OutboxWebhookDeliveries;
  let receiver: WebhookReceiver;
  let alice: TaskClient;
  let bob: TaskClient;
  beforeAll(async () => {
    receiver = await webhookReceiver();
    const store = new MemoryStore();
    webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
      limits: { pollMs: 50 },
    });
    server = await startEventsServer(store, { webhooks }, { authenticate });
    webhooks.start();
    alice = await TaskClient.connect({ url: server.http.url, headers: { authorization: 'Bearer alice' } });
    bob = await TaskClient.connect({ url: server.http.url, headers: { authorization: 'Bearer bob' } });
  });
  afterAll(async () => {
    await alice?.close();
    await bob?.close();
    await webhooks?.stop();
    await server?.close();
    await receiver?.close();
  });

  it('lists the event types, the task status type among them', async () => {
    const page = await alice.events().list();
    const names = page.events.map((type) => type.name);
    expect(names).toEqual(expect.arrayContaining([STAGE, NOTE, STATUS]));
    expect(page.events.find((type) => type.name === STAGE)?.delivery).toEqual(['poll', 'push', 'webhook']);
  });

  it('polls a task’s events from a cursor; another caller’s task answers as a missing one', async () => {
    const handle = await alice.callTool('staged', { stages: 2, stageMs: 0 });
    await handle.result();
    const source = handle.eventSource!;
    const polled = await alice.events().poll(STAGE, source.input, { cursor: source.initialCursor ?? null });
    expect(polled.events.map((event) => event.data)).toEqual([
      { index: 0, of: 2 },
      { index: 1, of: 2 },
    ]);
    expect(polled.cursor).toBe(polled.events.at(-1)?.cursor);
    const refused = await bob
      .events()
      .poll(STAGE, source.input)
      .catch((error: unknown) => error);
    const missing = await bob
      .events()
      .poll(STAGE, { taskId: 'no-such-task' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TaskRpcError);
    expect((refused as TaskRpcError).code).toBe((missing as TaskRpcError).code);
    expect((refused as TaskRpcError).message).toBe((missing as TaskRpcError).message);
  });

  it('streams any type of a task: its status changes, live, to the end', async () => {
    const gate = `status-${Date.now()}`;
    const handle = await alice.callTool('staged', { stages: 0, stageMs: 0, gate }, { follow: false });
    const statuses: unknown[] = [];
    const streaming = (async () => {
      // From the start of the task's log: a cursor names a position in the log, whatever the type.
      const cursor = handle.eventSource?.initialCursor ?? null;
      for await (const event of alice.events().stream(STATUS, { taskId: handle.taskId }, { cursor }))
        statuses.push(event.data['status']);
    })();
    await expect.poll(() => gates.has(gate)).toBe(true);
    gates.get(gate)?.();
    await streaming;
    expect(statuses.at(-1)).toBe('completed');
  });

  it('subscribes a webhook (handshake answered), receives signed deliveries, and unsubscribes', async () => {
    const gate = `hook-${Date.now()}`;
    const handle = await alice.callTool('staged', { stages: 1, stageMs: 0, gate }, { follow: false });
    const secret = generateWebhookSecret();
    const grant = await alice.events().subscribe(STATUS, { taskId: handle.taskId }, { url: receiver.url, secret });
    expect(grant.id).toMatch(/^sub_/);
    expect(receiver.received.some((received) => received.json['type'] === 'verification')).toBe(true);
    await expect.poll(() => gates.has(gate)).toBe(true);
    gates.get(gate)?.();
    await expect
      .poll(() => receiver.deliveries().filter((delivery) => delivery.json['type'] === 'terminated').length, {
        timeout: 10_000,
      })
      .toBe(1);
    const completed = receiver
      .deliveries()
      .map((delivery) => verifyWebhook(delivery.headers, delivery.body, secret).payload as Record<string, unknown>)
      .find((payload) => (payload['data'] as Record<string, unknown> | undefined)?.['status'] === 'completed');
    expect(completed).toMatchObject({ name: STATUS, data: { taskId: handle.taskId, status: 'completed' } });
    // The task ended the subscription: nothing is left to unsubscribe.
    const gone = await alice
      .events()
      .unsubscribe(STATUS, { taskId: handle.taskId }, receiver.url)
      .catch((error: unknown) => error);
    expect((gone as TaskRpcError).code).toBe(-32011);
  });

  it('keeps a task’s event source in the handle store, so a later process follows its events', async () => {
    const store = join(tempDir(), 'handles.json');
    const first = await TaskClient.connect(
      { url: server.http.url, headers: { authorization: 'Bearer alice' } },
      { store },
    );
    const gate = `kept-${Date.now()}`;
    const started = await first.callTool('staged', { stages: 2, stageMs: 0, gate }, { follow: false });
    const taskId = started.taskId!;
    await first.close();
    const later = await TaskClient.connect(
      { url: server.http.url, headers: { authorization: 'Bearer alice' } },
      { store },
    );
    try {
      const handle = await later.attach(taskId, { follow: false });
      expect(handle.eventSource).toEqual(started.eventSource);
      await expect.poll(() => gates.has(gate)).toBe(true);
      gates.get(gate)?.();
      const seen: unknown[] = [];
      for await (const event of handle.events()) seen.push(event.data);
      expect(seen).toEqual([
        { index: 0, of: 2 },
        { index: 1, of: 2 },
      ]);
    } finally {
      await later.close();
    }
  });
});
