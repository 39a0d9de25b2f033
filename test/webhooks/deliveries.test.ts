import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import type { WebhookEvent, WebhookSubscribeInput } from '../../src/events/webhooks/WebhookDeliveries.js';
import { WebhookError } from '../../src/events/webhooks/WebhookError.js';
import type { WebhookLimits } from '../../src/events/webhooks/WebhookLimits.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';
import { webhookReceiver, type WebhookReceiver } from './webhookReceiver.js';

const TYPE = 'io.github.mcp-tasks.task_status';

let receiver: WebhookReceiver;
const running: OutboxWebhookDeliveries[] = [];

function deliveries(limits: Partial<WebhookLimits> = {}, origins = [receiver.origin]) {
  const store = new MemoryStore();
  const webhooks = new OutboxWebhookDeliveries({
    store: store.webhooks,
    policy: new CallbackPolicy({ allowOrigins: origins }),
    limits: { pollMs: 20, retryDelaysMs: [150], ...limits },
  });
  running.push(webhooks);
  return webhooks;
}

const input = (extra: Partial<WebhookSubscribeInput> = {}): WebhookSubscribeInput => ({
  owner: 'alice',
  name: TYPE,
  arguments: { taskId: 't-1' },
  url: receiver.url,
  secret: generateWebhookSecret(),
  cursor: 'c0',
  scope: 't-1',
  ...extra,
});

const event = (n: number, extra: Partial<WebhookEvent> = {}): WebhookEvent => ({
  occurrence: { eventId: `t-1:${n}`, name: TYPE, timestamp: new Date(1_000 + n).toISOString(), data: { n } },
  owner: 'alice',
  scope: 't-1',
  cursor: `c${n + 1}`,
  ...extra,
});

async function refusal(promise: Promise<unknown>): Promise<WebhookError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookError);
    return error as WebhookError;
  }
  throw new Error('not refused');
}

beforeEach(async () => {
  receiver = await webhookReceiver();
});
afterEach(async () => {
  for (const webhooks of running.splice(0)) await webhooks.stop();
  await receiver.close();
});

describe('webhook subscriptions', () => {
  // spec V63
  it('needs an authenticated principal', async () => {
    const error = await refusal(deliveries().subscribe(input({ owner: undefined })));
    expect(error.kind).toBe('forbidden');
    expect((await refusal(deliveries().unsubscribe({ ...input(), owner: undefined }))).kind).toBe('forbidden');
  });

  // spec V61, V62, V98
  it('refuses bad secrets, non-https URLs and URLs that resolve to private addresses', async () => {
    const webhooks = deliveries();
    expect((await refusal(webhooks.subscribe(input({ secret: 'hunter2' })))).kind).toBe('invalid_params');
    expect((await refusal(webhooks.subscribe(input({ url: 'http://hooks.example.com/in' })))).kind).toBe(
      'invalid_params',
    );
    const port = new URL(receiver.origin).port;
    for (const url of [`https://localhost:${port}/in`, 'https://127.0.0.1/in', 'https://169.254.169.254/in']) {
      const error = await refusal(webhooks.subscribe(input({ url })));
      expect(error.kind).toBe('invalid_params');
      expect(error.data).toEqual({ reason: 'callback_url_not_allowed' });
    }
    expect(receiver.received).toEqual([]);
  });

  // spec V100, V101, V103
  it('verifies the endpoint before the first subscription of a (principal, url), signed, and only once', async () => {
    const webhooks = deliveries();
    const secret = generateWebhookSecret();
    const result = await webhooks.subscribe(input({ secret }));
    expect(result.id).toMatch(/^sub_[A-Za-z0-9_-]{32}$/);
    expect(result.created).toBe(true);
    expect(receiver.received).toHaveLength(1);
    const [handshake] = receiver.received;
    expect(handshake?.json).toEqual({ type: 'verification', challenge: expect.any(String) });
    expect(handshake?.headers['webhook-id']).toMatch(/^msg_verification_/); // spec V96
    expect(
      new Webhook(secret).verify(handshake?.body ?? '', handshake?.headers as Record<string, string>),
    ).toBeTruthy();
    // Other arguments at the same URL: already verified.
    await webhooks.subscribe(input({ arguments: { taskId: 't-2' }, scope: 't-2' }));
    expect(receiver.received).toHaveLength(1);
    // Another principal verifies for itself.
    await webhooks.subscribe(input({ owner: 'bob' }));
    expect(receiver.received).toHaveLength(2);
  });

  // spec V102, V106
  it('refuses an endpoint that does not echo the challenge, without repeating its answer', async () => {
    receiver.echo = 'not-the-nonce';
    const webhooks = deliveries();
    const error = await refusal(webhooks.subscribe(input()));
    expect(error.kind).toBe('callback_endpoint_error');
    expect(error.data).toEqual({ reason: 'challenge_failed' });
    expect(JSON.stringify({ message: error.message, data: error.data })).not.toContain('not-the-nonce');
    expect(await webhooks.list('alice')).toEqual([]);
    // Unreachable: the category.
    const closed = await webhookReceiver();
    await closed.close();
    const unreachable = await refusal(deliveries({}, [closed.origin]).subscribe(input({ url: closed.url })));
    expect(unreachable.data).toEqual({ reason: 'connection_refused' });
  });

  // spec V66, V67, V68, V69, V116
  it('derives the id from the key: a refresh is the same subscription, any other key another', async () => {
    const webhooks = deliveries();
    const first = await webhooks.subscribe(input({ arguments: { a: 1, b: 2 } }));
    const again = await webhooks.subscribe(input({ arguments: { b: 2, a: 1 } }));
    expect(again.id).toBe(first.id);
    expect(again.created).toBe(false);
    const bob = await webhooks.subscribe(input({ owner: 'bob', arguments: { a: 1, b: 2 } }));
    expect(bob.id).not.toBe(first.id);
    const other = await webhooks.subscribe(input({ arguments: { a: 1 } }));
    expect(other.id).not.toBe(first.id);
    // Another store, another process: the same id.
    expect((await deliveries().subscribe(input({ arguments: { a: 1, b: 2 } }))).id).toBe(first.id);
  });

  // spec V75–V78
  it('grants a TTL: the default, clamped, never refused; no expiry only when asked', async () => {
    const webhooks = deliveries({ defaultTtlMs: 3_600_000, minTtlMs: 60_000, maxTtlMs: 86_400_000 });
    const at = (iso: string | null) => (iso === null ? null : Date.parse(iso) - Date.now());
    const omitted = at((await webhooks.subscribe(input())).refreshBefore) as number;
    expect(omitted).toBeGreaterThan(3_590_000);
    expect(omitted).toBeLessThanOrEqual(3_600_000);
    const short = at((await webhooks.subscribe(input({ ttlMs: 1_000 }))).refreshBefore) as number;
    expect(short).toBeGreaterThan(55_000);
    expect(short).toBeLessThanOrEqual(60_000);
    const long = at((await webhooks.subscribe(input({ ttlMs: 30 * 86_400_000 }))).refreshBefore) as number;
    expect(long).toBeLessThanOrEqual(86_400_000);
    expect(long).toBeGreaterThan(86_000_000);
    expect((await webhooks.subscribe(input({ ttlMs: null }))).refreshBefore).toBeNull();
    const capped = deliveries({ allowNoExpiry: false });
    expect((await capped.subscribe(input({ ttlMs: null }))).refreshBefore).not.toBeNull();
  });

  // spec V115
  it('bounds the subscriptions of a principal', async () => {
    const webhooks = deliveries({ subscriptionsPerOwner: 2 });
    await webhooks.subscribe(input({ arguments: { n: 1 } }));
    await webhooks.subscribe(input({ arguments: { n: 2 } }));
    const error = await refusal(webhooks.subscribe(input({ arguments: { n: 3 } })));
    expect(error.kind).toBe('resource_exhausted');
    expect(error.data).toEqual({ limit: 'webhookSubscriptions', max: 2 });
    // A refresh is not a new one; bob has his own.
    await webhooks.subscribe(input({ arguments: { n: 2 } }));
    await webhooks.subscribe(input({ owner: 'bob', arguments: { n: 3 } }));
  });

  // spec V108, V109; EVENTS-SPEC §10
  it('is the owner’s alone: another principal’s unsubscribe and state find nothing', async () => {
    const webhooks = deliveries();
    const { id } = await webhooks.subscribe(input());
    expect((await refusal(webhooks.unsubscribe({ ...input(), owner: 'mallory' }))).kind).toBe('not_found');
    expect(await webhooks.state('mallory', id)).toBe('absent');
    expect(await webhooks.list('mallory')).toEqual([]);
    expect(await webhooks.state('alice', id)).toBe('active');
    await webhooks.unsubscribe(input());
    expect(await webhooks.state('alice', id)).toBe('absent');
    const error = await refusal(webhooks.unsubscribe(input()));
    expect(error.kind).toBe('not_found');
    expect(error.data).toEqual({ kind: 'subscription' });
  });
});

describe('webhook delivery', () => {
  // spec V81–V84, V86, V95 (an event has no top-level `type`)
  it('POSTs each event signed as Standard Webhooks, with the subscription id and the cursor', async () => {
    const webhooks = deliveries();
    const secret = generateWebhookSecret();
    const { id } = await webhooks.subscribe(input({ secret }));
    webhooks.start();
    expect(await webhooks.publish(event(0))).toBe(1);
    const [delivery] = await receiver.waitFor(1);
    expect(delivery?.headers['content-type']).toBe('application/json');
    expect(delivery?.headers['webhook-id']).toBe('t-1:0');
    expect(delivery?.headers['x-mcp-subscription-id']).toBe(id);
    expect(new Webhook(secret).verify(delivery?.body ?? '', delivery?.headers as Record<string, string>)).toEqual({
      ...event(0).occurrence,
      cursor: 'c1',
    });
    expect(verifyWebhook(delivery?.headers ?? {}, delivery?.body ?? '', secret).subscriptionId).toBe(id);
    await expect.poll(async () => (await webhooks.list('alice'))[0]?.deliveryStatus.lastDeliveryAt).not.toBeNull();
  });

  it('delivers only what the subscriber may see: its own tasks, its scope', async () => {
    const webhooks = deliveries();
    await webhooks.subscribe(input());
    webhooks.start();
    expect(await webhooks.publish(event(0, { owner: 'bob' }))).toBe(0);
    expect(await webhooks.publish(event(1, { scope: 't-2' }))).toBe(0);
    expect(await webhooks.publish(event(2, { occurrence: { ...event(2).occurrence, name: 'other' } }))).toBe(0);
    expect(await webhooks.publish(event(3))).toBe(1);
    const got = await receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.deliveries().map((d) => d.headers['webhook-id'])).toEqual(['t-1:3']);
    expect(got).toHaveLength(1);
  });

  // A new subscription's replay and the live publishing of what was appended meanwhile can offer one event twice.
  it('queues an event once when a new subscription’s replay and live publishing both offer it, in either order', async () => {
    const webhooks = deliveries();
    const { id } = await webhooks.subscribe(input());
    expect(await webhooks.publish(event(0))).toBe(1);
    expect(await webhooks.publishTo('alice', id, [event(0), event(1)])).toBe(1);
    expect(await webhooks.publish(event(1))).toBe(0);
    expect(await webhooks.publish(event(2))).toBe(1);
    webhooks.start();
    await receiver.waitFor(3);
    await new Promise((r) => setTimeout(r, 200));
    // Sent in parallel: each once, in any order.
    expect(
      receiver
        .deliveries()
        .map((d) => d.headers['webhook-id'])
        .sort(),
    ).toEqual(['t-1:0', 't-1:1', 't-1:2']);
  });

  // spec V85, V87: the same webhook-id on every attempt, each signed anew.
  it('retries a failed delivery with backoff, the same webhook-id, a fresh timestamp and signature', async () => {
    const webhooks = deliveries({ retryDelaysMs: [1_100] });
    const secret = generateWebhookSecret();
    await webhooks.subscribe(input({ secret }));
    receiver.answers.push(503, 503);
    webhooks.start();
    await webhooks.publish(event(0));
    const attempts = await receiver.waitFor(3, 15_000);
    expect(attempts.map((a) => a.headers['webhook-id'])).toEqual(['t-1:0', 't-1:0', 't-1:0']);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(900);
    expect(attempts[1]!.headers['webhook-timestamp']).not.toBe(attempts[0]!.headers['webhook-timestamp']);
    expect(attempts[1]!.headers['webhook-signature']).not.toBe(attempts[0]!.headers['webhook-signature']);
    for (const attempt of attempts) expect(verifyWebhook(attempt.headers, attempt.body, secret).id).toBe('t-1:0');
    await expect.poll(async () => (await webhooks.list('alice'))[0]?.deliveryStatus.lastError).toBeNull();
  });

  // spec V88, V89, V94
  it('gives up after its attempts, and at once on 410 and 413, keeping the subscription', async () => {
    const webhooks = deliveries({ maxAttempts: 2 });
    const { id } = await webhooks.subscribe(input());
    receiver.answers.push(500, 500, 410, 413);
    webhooks.start();
    await webhooks.publish(event(0));
    await receiver.waitFor(2);
    await webhooks.publish(event(1));
    await webhooks.publish(event(2));
    await receiver.waitFor(4);
    await webhooks.publish(event(3));
    await receiver.waitFor(5);
    await new Promise((r) => setTimeout(r, 400));
    expect(receiver.deliveries().map((d) => d.headers['webhook-id'])).toEqual([
      't-1:0',
      't-1:0',
      't-1:1',
      't-1:2',
      't-1:3',
    ]);
    expect(await webhooks.state('alice', id)).toBe('active');
    const [view] = await webhooks.list('alice');
    expect(view?.queued).toBe(0);
  });

  // spec V86: an event overtaking an unsettled one carries no cursor past it.
  it('sends a cursor only once everything before it is settled', async () => {
    const webhooks = deliveries({ retryDelaysMs: [600] });
    await webhooks.subscribe(input());
    receiver.answers.push(503);
    await webhooks.publish(event(0));
    await webhooks.publish(event(1));
    webhooks.start();
    const got = await receiver.waitFor(3);
    const byId = (id: string) => got.filter((d) => d.headers['webhook-id'] === id).map((d) => d.json['cursor']);
    expect(byId('t-1:0')).toEqual(['c1', 'c1']);
    // Event 1 went out while event 0 waited for its retry: no cursor yet (nothing settled).
    expect(byId('t-1:1')).toEqual([null]);
  });

  // EVENTS-SPEC §7.5
  it('queues a gap envelope in place of what a full queue cannot hold', async () => {
    const webhooks = deliveries({ queuedPerSubscription: 1 });
    const secret = generateWebhookSecret();
    await webhooks.subscribe(input({ secret }));
    for (let n = 0; n < 4; n++) await webhooks.publish(event(n));
    webhooks.start();
    await receiver.waitFor(2);
    await new Promise((r) => setTimeout(r, 200));
    // Both are due at once and go out side by side: their order is not fixed (the receiver orders by timestamp).
    const got = receiver.deliveries();
    expect(got).toHaveLength(2);
    const gap = got.find((d) => d.json['type'] === 'gap');
    expect(got.find((d) => d !== gap)?.json).toMatchObject({ eventId: 't-1:0' });
    expect(gap?.json).toEqual({ type: 'gap', cursor: 'c4' });
    expect(gap?.headers['webhook-id']).toMatch(/^msg_gap_[0-9a-f]+$/);
    expect(verifyWebhook(gap!.headers, gap!.body, secret).payload).toEqual({ type: 'gap', cursor: 'c4' });
  });

  // spec V90: a body over the bound is not sent; a gap envelope stands in for it.
  it('skips an event whose body is over the bound and queues a gap in its place', async () => {
    const webhooks = deliveries({ maxBodyBytes: 512 });
    await webhooks.subscribe(input());
    webhooks.start();
    await webhooks.publish(event(0, { occurrence: { ...event(0).occurrence, data: { text: 'x'.repeat(600) } } }));
    await webhooks.publish(event(1));
    await receiver.waitFor(2);
    const got = receiver.deliveries().map((d) => d.json);
    expect(got).toContainEqual({ type: 'gap', cursor: 'c1' });
    expect(got.find((d) => d['type'] === undefined)).toMatchObject({ eventId: 't-1:1' });
    expect(got.some((d) => d['eventId'] === 't-1:0')).toBe(false);
  });

  // spec V110, TS8
  it('ends subscriptions with a signed terminated envelope; they are gone at once', async () => {
    const webhooks = deliveries();
    const secret = generateWebhookSecret();
    const { id } = await webhooks.subscribe(input({ secret }));
    await webhooks.subscribe(input({ arguments: { taskId: 't-2' }, scope: 't-2' }));
    webhooks.start();
    const error = { code: -32012, message: 'The task ended', data: { status: 'completed' } };
    expect(await webhooks.terminate({ name: TYPE, scope: 't-1' }, error)).toBe(1);
    expect(await webhooks.state('alice', id)).toBe('absent');
    expect(await webhooks.publish(event(5))).toBe(0);
    const [envelope] = await receiver.waitFor(1);
    expect(envelope?.json).toEqual({ type: 'terminated', error });
    expect(envelope?.headers['webhook-id']).toMatch(/^msg_terminated_/);
    expect(envelope?.headers['x-mcp-subscription-id']).toBe(id);
    expect(verifyWebhook(envelope!.headers, envelope!.body, secret).id).toMatch(/^msg_terminated_/);
    expect(await webhooks.list('alice')).toHaveLength(1);
  });

  // spec V71, V72
  it('rotates the secret on refresh: both sign during the grace, then only the new one', async () => {
    let clock = Date.now();
    const store = new MemoryStore();
    const webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
      limits: { pollMs: 20, secretGraceMs: 60_000, leaseMs: 600_000 },
      now: () => clock,
    });
    running.push(webhooks);
    const older = generateWebhookSecret();
    const newer = generateWebhookSecret();
    await webhooks.subscribe(input({ secret: older }));
    await webhooks.subscribe(input({ secret: newer }));
    webhooks.start();
    await webhooks.publish(event(0));
    const [first] = await receiver.waitFor(1);
    expect(String(first?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(first!.headers, first!.body, older, { now: clock }).id).toBe('t-1:0');
    expect(verifyWebhook(first!.headers, first!.body, newer, { now: clock }).id).toBe('t-1:0');
    await expect.poll(async () => (await webhooks.list('alice'))[0]?.queued).toBe(0);
    clock += 61_000;
    await webhooks.publish(event(1));
    const [, second] = await receiver.waitFor(2);
    expect(String(second?.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => verifyWebhook(second!.headers, second!.body, older, { now: clock })).toThrow();
    expect(verifyWebhook(second!.headers, second!.body, newer, { now: clock }).id).toBe('t-1:1');
  });

  // spec V93, V71
  it('suspends after sustained failure; a refresh reactivates and says events were skipped', async () => {
    const webhooks = deliveries({ suspendAfterAttempts: 3, suspendFailureRatio: 0.5, maxAttempts: 1 });
    const { id } = await webhooks.subscribe(input());
    receiver.answers.push(500, 500, 500);
    webhooks.start();
    for (let n = 0; n < 3; n++) await webhooks.publish(event(n));
    await receiver.waitFor(3);
    await expect.poll(() => webhooks.state('alice', id)).toBe('suspended');
    const [view] = await webhooks.list('alice');
    expect(view?.deliveryStatus).toMatchObject({ active: false, lastError: 'http_5xx' });
    expect(view?.deliveryStatus.failedSince).not.toBeNull();
    expect(await webhooks.publish(event(3))).toBe(0);
    const refreshed = await webhooks.subscribe(input());
    expect(refreshed).toMatchObject({ id, created: false, truncated: true });
    expect(refreshed.deliveryStatus.active).toBe(true);
    await webhooks.publish(event(4));
    const got = await receiver.waitFor(4);
    expect(got[3]?.headers['webhook-id']).toBe('t-1:4');
  });

  // spec V99: the address is checked again at delivery.
  it('does not deliver to a private address the operator has not allowlisted', async () => {
    const store = new MemoryStore();
    const sub = deliveries();
    const { id } = await sub.subscribe(input());
    // The same subscription served by an instance whose operator allowlists nothing.
    const strict = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy(),
      limits: { pollMs: 20, maxAttempts: 1 },
    });
    running.push(strict);
    const record = (await (sub as unknown as { store: MemoryStore['webhooks'] }).store.getSubscription(id))!;
    await store.webhooks.saveSubscription(record.record, undefined, 10);
    strict.start();
    await strict.publish(event(0));
    await expect.poll(async () => (await strict.list('alice'))[0]?.deliveryStatus.lastError).toBe('connection_refused');
    expect(receiver.deliveries()).toEqual([]);
  });
});

// spec V105
it('rate-limits verification POSTs per destination host', async () => {
  const webhooks = deliveries({ verificationsPerHostPerMinute: 2 });
  receiver.echo = 'wrong';
  for (let i = 0; i < 2; i++)
    expect((await refusal(webhooks.subscribe(input({ owner: `p${i}` })))).kind).toBe('callback_endpoint_error');
  const error = await refusal(webhooks.subscribe(input({ owner: 'p3' })));
  expect(error.kind).toBe('resource_exhausted');
  expect(error.data).toEqual({ limit: 'webhookVerifications', max: 2 });
  expect(receiver.received).toHaveLength(2);
});

// spec V79, V104, V117: the subscription and its verification survive a restart of the store and the process.
it('keeps subscriptions and their verification across a restart of a file store', async () => {
  const path = `${tempDir()}/webhooks.db`;
  const open = async () => {
    const store = new SqliteStore({ path });
    await store.init();
    await store.webhooks.init();
    const webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
      limits: { pollMs: 20 },
    });
    return { store, webhooks };
  };
  const before = await open();
  const secret = generateWebhookSecret();
  const { id } = await before.webhooks.subscribe(input({ secret, ttlMs: null }));
  await before.store.close();
  expect(receiver.received).toHaveLength(1); // the handshake

  const after = await open();
  running.push(after.webhooks);
  expect(await after.webhooks.state('alice', id)).toBe('active');
  expect((await after.webhooks.list('alice'))[0]?.refreshBefore).toBeNull();
  after.webhooks.start();
  await after.webhooks.publish(event(0));
  const [delivery] = await receiver.waitFor(1);
  expect(verifyWebhook(delivery!.headers, delivery!.body, secret).subscriptionId).toBe(id);
  // A refresh after the restart needs no second handshake.
  expect((await after.webhooks.subscribe(input({ secret, ttlMs: null }))).id).toBe(id);
  expect(receiver.received.filter((r) => r.json['type'] === 'verification')).toHaveLength(1);
  await after.webhooks.stop();
  await after.store.close();
});
