import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import type { ModernPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import { gates, NOTE, STAGE, startEventsServer, type EventsServer, authenticate } from './eventsServer.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

describe('the conformance diagnostic controls of live streams (EVENTS-SPEC §14)', () => {
  let server: EventsServer;
  let peer: ModernPeer;

  beforeAll(async () => {
    server = await startEventsServer('memory', { conformanceControls: true });
    peer = eventsPeer(server.http.url);
  });
  afterAll(async () => {
    gates.get('controls')?.();
    await server.close();
  });

  const control = async (name: string, args: Record<string, unknown>) => {
    const answer = await peer.request('tools/call', { name, arguments: args });
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    return (answer.result?.['content'] as Array<{ text: string }>)[0]?.text;
  };

  it('lists the stream controls as tools; webhook ones only with webhook delivery', async () => {
    const listed = await peer.request('tools/list');
    const names = (listed.result?.['tools'] as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'events_conformance_yield_error',
        'events_conformance_yield_gap',
        'events_conformance_terminate',
        'staged',
      ]),
    );
    expect(names).not.toContain('events_conformance_webhook_gap');
  });

  it('V48 V50 V49: yield_error and yield_gap leave the type’s live streams open; terminate ends them', async () => {
    const created = await peer.request('tools/call', {
      name: 'staged',
      arguments: { stages: 0, stageMs: 0, gate: 'controls' },
    });
    const taskId = created.result?.['taskId'] as string;
    const stage = await openStream(server.http.url, { name: STAGE, arguments: { taskId } });
    const note = await openStream(server.http.url, { name: NOTE, arguments: { taskId } });
    await stage.next(method('notifications/events/active'));
    await note.next(method('notifications/events/active'));

    expect(await control('events_conformance_yield_error', { name: STAGE })).toBe('1 streams');
    const error = await stage.next(method('notifications/events/error'));
    expect(error.params?.['error']).toMatchObject({ code: -32603 });

    await control('events_conformance_yield_gap', { name: STAGE });
    await stage.next((m) => method('notifications/events/active')(m) && m.params?.['truncated'] === true);

    expect(await control('events_conformance_terminate', { name: STAGE })).toBe('1 streams');
    await stage.done;
    expect(stage.messages.find(method('notifications/events/terminated'))?.params?.['error']).toMatchObject({
      code: -32011,
    });
    expect(stage.messages.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
    // Only the type named: the other stream heard nothing and is still open.
    expect(
      note.messages.filter(
        (m) => m.method !== 'notifications/events/active' && m.method !== 'notifications/events/heartbeat',
      ),
    ).toEqual([]);
    note.close();
    await note.done;
  });

  it('a control with a bad argument is -32602', async () => {
    const answer = await peer.request('tools/call', { name: 'events_conformance_yield_gap', arguments: {} });
    expect(answer.error?.code).toBe(-32602);
  });
});

describe('the conformance controls of webhook subscriptions (EVENTS-SPEC §14)', () => {
  let server: EventsServer;
  let receiver: WebhookReceiver;
  let webhooks: OutboxWebhookDeliveries;

  beforeAll(async () => {
    receiver = await webhookReceiver();
    const store = new SqliteStore({ path: join(tempDir(), 'controls.db') });
    await store.init();
    await store.webhooks.init();
    // No origin allowed up front: the control lets the receiver's in.
    webhooks = new OutboxWebhookDeliveries({ store: store.webhooks, limits: { pollMs: 50 } });
    server = await startEventsServer(store, { webhooks, conformanceControls: true }, { authenticate });
    webhooks.start();
  });
  afterAll(async () => {
    gates.get('webhook-controls')?.();
    await webhooks.stop();
    await server.close();
    await receiver.close();
  });

  it('allow_callback_origin lets a loopback receiver subscribe; webhook_gap and webhook_terminate reach it', async () => {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', {
      name: 'staged',
      arguments: { stages: 0, stageMs: 0, gate: 'webhook-controls' },
    });
    const taskId = created.result?.['taskId'] as string;
    const subscribe = () =>
      alice.request('events/subscribe', {
        name: STAGE,
        arguments: { taskId },
        delivery: { mode: 'webhook', url: receiver.url, secret: generateWebhookSecret() },
      });
    expect((await subscribe()).error?.code).toBe(-32602); // http on loopback: refused before the control
    const allowed = await alice.request('tools/call', {
      name: 'events_conformance_allow_callback_origin',
      arguments: { origin: receiver.origin },
    });
    expect((allowed.result?.['content'] as Array<{ text: string }>)[0]?.text).toBe(receiver.origin);
    const subscribed = await subscribe();
    expect(subscribed.error, JSON.stringify(subscribed.error)).toBeUndefined();
    const id = subscribed.result?.['id'] as string;
    await alice.request('tools/call', { name: 'events_conformance_webhook_gap', arguments: { id } });
    await expect
      .poll(() => receiver.deliveries().some((d) => d.json['type'] === 'gap'), { timeout: 10_000 })
      .toBe(true);
    await alice.request('tools/call', { name: 'events_conformance_webhook_terminate', arguments: { id } });
    await expect
      .poll(() => receiver.deliveries().some((d) => d.json['type'] === 'terminated'), { timeout: 10_000 })
      .toBe(true);
    expect(await webhooks.state('alice', id)).toBe('absent');
  });
});
