import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskEventRejectedError } from '../../src/engine/index.js';
import { EventCatalog, type EventsOptions } from '../../src/events/index.js';
import { CallbackPolicy, OutboxWebhookDeliveries, generateWebhookSecret } from '../../src/events/webhooks/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import type { ModernPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import { EVENT_TYPES, startEventsServer, type EventsServer, authenticate } from './eventsServer.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

const DEPLOY = 'com.example.deploy_finished';
const SMALL = 'com.example.small_ring';
const AGING = 'com.example.aging';
const POLL_ONLY = 'com.example.poll_only';
const CAPPED = 'com.example.capped';

const payload = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
const UNTASKED: NonNullable<EventsOptions['types']> = [
  { name: DEPLOY, description: 'A deploy finished', payloadSchema: payload, taskScoped: false },
  { name: SMALL, description: 'Kept 3 deep', payloadSchema: payload, taskScoped: false, retain: { events: 3 } },
  { name: AGING, description: 'Kept 50 ms', payloadSchema: payload, taskScoped: false, retain: { maxAgeMs: 50 } },
  { name: POLL_ONLY, description: 'Poll only', payloadSchema: payload, taskScoped: false, delivery: ['poll'] },
  {
    name: CAPPED,
    description: 'One subscription each',
    payloadSchema: payload,
    taskScoped: false,
    maxSubscriptions: 1,
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Answer = Awaited<ReturnType<ModernPeer['request']>>;
const occurrences = (answer: Answer) => answer.result?.['events'] as Array<Record<string, unknown>>;

describe('untasked event types: emitted by the author’s code, served by poll, push and webhook', () => {
  let server: EventsServer;
  let second: EventsServer;
  let receiver: WebhookReceiver;
  let webhooks: OutboxWebhookDeliveries;
  let webhooksOfSecond: OutboxWebhookDeliveries;
  let alice: ModernPeer;
  let bob: ModernPeer;
  let anonymous: ModernPeer;

  beforeAll(async () => {
    receiver = await webhookReceiver();
    const path = join(tempDir(), 'untasked.db');
    const store = new SqliteStore({ path });
    await store.init();
    await store.webhooks.init();
    const policy = () => new CallbackPolicy({ allowOrigins: [receiver.origin] });
    webhooks = new OutboxWebhookDeliveries({ store: store.webhooks, policy: policy(), limits: { pollMs: 50 } });
    server = await startEventsServer(store, { types: [...EVENT_TYPES!, ...UNTASKED], webhooks }, { authenticate });
    webhooks.start();
    // A second instance over the same database: its webhook subscriptions are in the shared store.
    const other = new SqliteStore({ path });
    await other.init();
    await other.webhooks.init();
    webhooksOfSecond = new OutboxWebhookDeliveries({ store: other.webhooks, policy: policy(), limits: { pollMs: 50 } });
    second = await startEventsServer(
      other,
      { types: [...EVENT_TYPES!, ...UNTASKED], webhooks: webhooksOfSecond },
      { authenticate },
    );
    alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    bob = eventsPeer(server.http.url, { authorization: 'Bearer bob' });
    anonymous = eventsPeer(server.http.url);
  });
  afterAll(async () => {
    await webhooks.stop();
    await webhooksOfSecond.stop();
    await second.close();
    await server.close();
    await receiver.close();
  });

  const poll = (peer: ModernPeer, params: Record<string, unknown>) => peer.request('events/poll', params);
  const emit = (name: string, n: number, to?: string) =>
    server.tasks.emitEvent(name, { n }, to === undefined ? undefined : { to });

  it('V10 V11 §3: listed with no arguments and their own delivery modes, sorted with the task types', async () => {
    const listed = await alice.request('events/list', {});
    const events = listed.result?.['events'] as Array<Record<string, unknown>>;
    const names = events.map((event) => event['name'] as string);
    expect(names).toEqual([...names].sort());
    const deploy = events.find((event) => event['name'] === DEPLOY);
    expect(deploy).toMatchObject({
      delivery: ['poll', 'push', 'webhook'],
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      payloadSchema: payload,
    });
    expect(events.find((event) => event['name'] === POLL_ONLY)?.['delivery']).toEqual(['poll']);
    // A normal server serves no conformance control.
    const tools = (await alice.request('tools/list')).result?.['tools'] as Array<{ name: string }>;
    expect(tools.some((tool) => tool.name.startsWith('events_conformance_'))).toBe(false);
  });

  it('V24 V35 V36 V38 V41: a null cursor starts from now; later polls get what was emitted, in order, in batches', async () => {
    const first = await poll(alice, { name: DEPLOY, cursor: null });
    expect(first.result).toMatchObject({ events: [], truncated: false, hasMore: false, resultType: 'complete' });
    const cursor = first.result?.['cursor'] as string;
    const ids = [await emit(DEPLOY, 1), await emit(DEPLOY, 2), await emit(DEPLOY, 3)];
    const batch = await poll(alice, { name: DEPLOY, cursor, maxEvents: 2 });
    expect(occurrences(batch).map((event) => event['data'])).toEqual([{ n: 1 }, { n: 2 }]);
    expect(occurrences(batch).map((event) => event['eventId'])).toEqual(ids.slice(0, 2));
    expect(occurrences(batch)[0]).toMatchObject({ name: DEPLOY, timestamp: expect.any(String) });
    expect(batch.result?.['hasMore']).toBe(true);
    const rest = await poll(alice, { name: DEPLOY, cursor: batch.result?.['cursor'] });
    expect(occurrences(rest).map((event) => event['data'])).toEqual([{ n: 3 }]);
    expect(rest.result?.['hasMore']).toBe(false);
    // spec V39: the same request answers the same again (no server-held state).
    const again = await poll(alice, { name: DEPLOY, cursor, maxEvents: 2 });
    expect(occurrences(again).map((event) => event['eventId'])).toEqual(ids.slice(0, 2));
  });

  it('V40 V12: arguments, a foreign or broken cursor, and an unoffered mode are refused', async () => {
    expect((await poll(alice, { name: DEPLOY, arguments: { taskId: 'x' } })).error?.code).toBe(-32602);
    expect((await poll(alice, { name: DEPLOY, cursor: 'nonsense' })).error?.code).toBe(-32602);
    const other = (await poll(alice, { name: SMALL, cursor: null })).result?.['cursor'];
    expect((await poll(alice, { name: DEPLOY, cursor: other })).error?.code).toBe(-32602);
    const refused = await openStream(server.http.url, { name: POLL_ONLY }, { headers: { authorization: 'Bearer a' } });
    await refused.done;
    expect(refused.messages[0]?.error).toMatchObject({
      code: -32014,
      data: { feature: 'deliveryMode', value: 'push' },
    });
    const subscribe = await alice.request('events/subscribe', {
      name: POLL_ONLY,
      delivery: { mode: 'webhook', url: receiver.url, secret: generateWebhookSecret() },
    });
    expect(subscribe.error).toMatchObject({ code: -32014, data: { feature: 'deliveryMode', value: 'webhook' } });
  });

  it('V32 V33: a cursor older than the ring keeps is answered with truncated and the oldest kept, never an error', async () => {
    const start = (await poll(alice, { name: SMALL, cursor: null })).result?.['cursor'];
    for (let n = 1; n <= 5; n++) await emit(SMALL, n);
    const answer = await poll(alice, { name: SMALL, cursor: start });
    expect(answer.error).toBeUndefined();
    expect(answer.result?.['truncated']).toBe(true);
    expect(occurrences(answer).map((event) => event['data'])).toEqual([{ n: 3 }, { n: 4 }, { n: 5 }]);
    const next = await poll(alice, { name: SMALL, cursor: answer.result?.['cursor'] });
    expect(next.result).toMatchObject({ events: [], truncated: false });
  });

  it('V29 V30 and maxAgeMs retention: old events are skipped with truncated', async () => {
    const start = (await poll(alice, { name: DEPLOY, cursor: null })).result?.['cursor'];
    await emit(DEPLOY, 10);
    await sleep(1000);
    const before11 = Date.now();
    await emit(DEPLOY, 11);
    // A floor between the two emits, with half a second to spare for a slow machine on either side.
    const floored = await poll(alice, { name: DEPLOY, cursor: start, maxAgeMs: Date.now() - before11 + 500 });
    expect(floored.result?.['truncated']).toBe(true);
    expect(occurrences(floored).map((event) => event['data'])).toEqual([{ n: 11 }]);
    // The type's own age bound: a 50 ms window drops the event itself.
    const aging = (await poll(alice, { name: AGING, cursor: null })).result?.['cursor'];
    await emit(AGING, 1);
    await sleep(80);
    const late = await poll(alice, { name: AGING, cursor: aging });
    expect(late.result).toMatchObject({ events: [], truncated: true });
  });

  it('an event addressed to one principal reaches no other, on poll and push', async () => {
    const cursor = (await poll(alice, { name: DEPLOY, cursor: null })).result?.['cursor'];
    const stream = await openStream(server.http.url, { name: DEPLOY }, { headers: { authorization: 'Bearer alice' } });
    await stream.next(method('notifications/events/active'));
    await emit(DEPLOY, 100, 'bob');
    await emit(DEPLOY, 101);
    await stream.next(method('notifications/events/event'));
    const seen = (peer: ModernPeer) =>
      poll(peer, { name: DEPLOY, cursor }).then((answer) => occurrences(answer).map((event) => event['data']));
    expect(await seen(alice)).toEqual([{ n: 101 }]);
    expect(await seen(bob)).toEqual([{ n: 100 }, { n: 101 }]);
    expect(await seen(anonymous)).toEqual([{ n: 101 }]);
    // Alice's poll skipped Bob's event without a trace: no truncated, no gap in what she sees.
    expect((await poll(alice, { name: DEPLOY, cursor })).result?.['truncated']).toBe(false);
    expect(stream.messages.filter(method('notifications/events/event')).map((m) => m.params?.['data'])).toEqual([
      { n: 101 },
    ]);
    stream.close();
    await stream.done;
  });

  it('V45 V47 V46 V53: push from a cursor replays, then delivers live events with the cursor after each', async () => {
    const cursor = (await poll(alice, { name: DEPLOY, cursor: null })).result?.['cursor'];
    await emit(DEPLOY, 200);
    const stream = await openStream(server.http.url, { name: DEPLOY, cursor }, { id: 'deploys' });
    expect(stream.contentType).toContain('text/event-stream');
    const active = await stream.next(method('notifications/events/active'));
    expect(active.params).toMatchObject({ cursor, truncated: false });
    expect(active.params?.['_meta']).toEqual({ 'io.modelcontextprotocol/subscriptionId': 'deploys' });
    await emit(DEPLOY, 201);
    await stream.next(
      (m) => method('notifications/events/event')(m) && (m.params?.['data'] as { n: number }).n === 201,
    );
    const events = stream.messages.filter(method('notifications/events/event'));
    expect(events.map((m) => m.params?.['data'])).toEqual([{ n: 200 }, { n: 201 }]);
    // The cursor after the last event resumes after it.
    const resumed = await poll(alice, { name: DEPLOY, cursor: events[1]?.params?.['cursor'] });
    expect(resumed.result).toMatchObject({ events: [], truncated: false });
    stream.close();
    await stream.done;
  });

  it('V50: a push stream whose ring dropped events it had not sent says so with a fresh active, then goes on from the oldest kept', async () => {
    const stream = await openStream(server.http.url, { name: SMALL }, { id: 'lagging' });
    await stream.next(method('notifications/events/active'));
    // Ten appends in one turn of the event loop: the ring keeps 3 before the stream's next read.
    await Promise.all(Array.from({ length: 10 }, (_, i) => emit(SMALL, 500 + i)));
    await stream.next(
      (m) => method('notifications/events/event')(m) && (m.params?.['data'] as { n: number }).n === 509,
    );
    const actives = stream.messages.filter(method('notifications/events/active'));
    expect(actives.map((m) => m.params?.['truncated'])).toEqual([false, true]);
    expect(stream.messages.filter(method('notifications/events/event')).map((m) => m.params?.['data'])).toEqual([
      { n: 507 },
      { n: 508 },
      { n: 509 },
    ]);
    // The fresh active comes before the kept events, and its cursor resumes at the oldest kept.
    const gapAt = stream.messages.indexOf(actives[1] as (typeof stream.messages)[number]);
    const firstEvent = stream.messages.findIndex(method('notifications/events/event'));
    expect(gapAt).toBeLessThan(firstEvent);
    const resumed = await poll(alice, { name: SMALL, cursor: actives[1]?.params?.['cursor'] });
    expect(occurrences(resumed).map((event) => event['data'])).toEqual([{ n: 507 }, { n: 508 }, { n: 509 }]);
    stream.close();
    await stream.done;
  });

  it('V60 V73 V86: a webhook subscription replays from its cursor and receives live events; addressed ones only its principal’s', async () => {
    const cursor = (await poll(alice, { name: DEPLOY, cursor: null })).result?.['cursor'];
    const replayed = await emit(DEPLOY, 300);
    const url = `${receiver.url}?who=alice`;
    const subscribed = await alice.request('events/subscribe', {
      name: DEPLOY,
      cursor,
      delivery: { mode: 'webhook', url, secret: generateWebhookSecret() },
    });
    expect(subscribed.error, JSON.stringify(subscribed.error)).toBeUndefined();
    const id = subscribed.result?.['id'] as string;
    expect(subscribed.result).toMatchObject({ cursor, truncated: false, resultType: 'complete' });
    await emit(DEPLOY, 301, 'bob');
    const live = await emit(DEPLOY, 302);
    const mine = () =>
      receiver.deliveries().filter((d) => d.headers['x-mcp-subscription-id'] === id && d.json['type'] === undefined);
    await expect.poll(() => mine().length, { timeout: 10_000 }).toBe(2);
    expect(mine().map((d) => d.json['eventId'])).toEqual([replayed, live]);
    expect(mine().map((d) => d.json['data'])).toEqual([{ n: 300 }, { n: 302 }]);
    expect((await alice.request('events/unsubscribe', { name: DEPLOY, delivery: { url } })).error).toBeUndefined();
    // spec V109: gone now.
    expect((await alice.request('events/unsubscribe', { name: DEPLOY, delivery: { url } })).error?.code).toBe(-32011);
  });

  it('across instances: a webhook subscription made on one instance receives what another emits (the store’s outbox); poll reads its own process', async () => {
    const url = `${receiver.url}?who=bob-second`;
    const onSecond = eventsPeer(second.http.url, { authorization: 'Bearer bob' });
    const subscribed = await onSecond.request('events/subscribe', {
      name: DEPLOY,
      delivery: { mode: 'webhook', url, secret: generateWebhookSecret() },
    });
    expect(subscribed.error, JSON.stringify(subscribed.error)).toBeUndefined();
    const id = subscribed.result?.['id'] as string;
    const secondCursor = (await poll(onSecond, { name: DEPLOY, cursor: null })).result?.['cursor'];
    await emit(DEPLOY, 400, 'bob');
    await expect
      .poll(() => receiver.deliveries().some((d) => d.headers['x-mcp-subscription-id'] === id), { timeout: 10_000 })
      .toBe(true);
    expect(receiver.deliveries().find((d) => d.headers['x-mcp-subscription-id'] === id)?.json['data']).toEqual({
      n: 400,
    });
    // The ring is the emitting process's: the second instance's poll has nothing.
    expect(occurrences(await poll(onSecond, { name: DEPLOY, cursor: secondCursor }))).toEqual([]);
    await onSecond.request('events/unsubscribe', { name: DEPLOY, delivery: { url } });
  });

  it('V115: the per-type cap refuses one subscription too many before contacting the endpoint; a refresh passes', async () => {
    const subscribe = (peer: ModernPeer, url: string) =>
      peer.request('events/subscribe', {
        name: CAPPED,
        delivery: { mode: 'webhook', url, secret: generateWebhookSecret() },
      });
    expect((await subscribe(alice, `${receiver.url}?cap=1`)).error).toBeUndefined();
    const handshakes = receiver.received.length;
    const refused = await subscribe(alice, `${receiver.url}?cap=2`);
    expect(refused.error).toMatchObject({ code: -32013, data: { limit: 'subscriptions', max: 1, name: CAPPED } });
    expect(receiver.received.length).toBe(handshakes);
    expect((await subscribe(alice, `${receiver.url}?cap=1`)).error).toBeUndefined(); // spec V68: a refresh
    expect((await subscribe(bob, `${receiver.url}?cap=2`)).error).toBeUndefined(); // another principal's own cap
    // Concurrent subscribes of one principal cannot pass the cap together.
    const carol = eventsPeer(server.http.url, { authorization: 'Bearer carol' });
    const answers = await Promise.all([1, 2, 3].map((n) => subscribe(carol, `${receiver.url}?carol=${n}`)));
    expect(answers.filter((answer) => answer.error === undefined)).toHaveLength(1);
    expect(answers.filter((answer) => answer.error?.code === -32013)).toHaveLength(2);
  });

  it('V21: emitEvent checks the type and its payload; a task’s work cannot emit an untasked type', async () => {
    await expect(server.tasks.emitEvent('com.example.unknown', { n: 1 })).rejects.toBeInstanceOf(
      TaskEventRejectedError,
    );
    await expect(server.tasks.emitEvent(DEPLOY, { n: 'one' })).rejects.toMatchObject({ reason: 'invalid_payload' });
    // A task-scoped type is not for emitEvent ...
    await expect(server.tasks.emitEvent(EVENT_TYPES![0]!.name, { index: 1 })).rejects.toMatchObject({
      reason: 'unknown_type',
    });
    await expect(server.tasks.emitEvent(DEPLOY, { n: 1 }, { to: '' })).rejects.toBeInstanceOf(TypeError);
    // ... and the engine's check of a task's emit (step.emit, emitTaskEvent) refuses an untasked one.
    const catalog = new EventCatalog(UNTASKED, ['poll', 'push', 'webhook']);
    expect(() => catalog.check(DEPLOY, { n: 1 })).toThrow(TaskEventRejectedError);
  });

  it('refuses at start-up a type that offers no mode served, or an untasked type naming tools', () => {
    expect(() => new EventCatalog([{ ...UNTASKED[0]!, delivery: ['webhook'] }], ['poll', 'push'])).toThrow(TypeError);
    expect(() => new EventCatalog([{ ...UNTASKED[0]!, tools: ['x'] }], ['poll'])).toThrow(TypeError);
    expect(() => new EventCatalog([{ ...UNTASKED[0]!, retain: { events: 0 } }], ['poll'])).toThrow(TypeError);
  });
});
