// The operator's event authorization (`events.authorize`): checked at every poll, stream and subscribe of an
// authenticated caller (spec V64), and re-verified while a push stream or a task's webhook subscription lives, which a
// revocation ends with `terminated` and -32012 (V65, V110).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { TASK_STATUS_EVENT } from '../../src/engine/index.js';
import type { EventAccessRequest } from '../../src/events/index.js';
import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import { authenticate, gates, NOTE, STAGE, startEventsServer, type EventsServer } from './eventsServer.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

const REVOKED = {
  code: -32012,
  message: 'Forbidden: access to this event type was revoked',
  data: { reason: 'revoked' },
};

describe('events.authorize: who may receive which events (spec V64, V65)', () => {
  let receiver: WebhookReceiver;
  let webhooks: OutboxWebhookDeliveries;
  let server: EventsServer;
  const asked: EventAccessRequest[] = [];
  /** Principals refused, by type name ('*' for every type). */
  const refused = new Map<string, string>();
  let failing = false;
  const store = new MemoryStore();

  beforeAll(async () => {
    receiver = await webhookReceiver();
    webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
      limits: { pollMs: 20 },
    });
    server = await startEventsServer(
      store,
      {
        webhooks,
        reverifyMs: 100,
        authorize: (request) => {
          asked.push(request);
          if (failing) throw new Error('the authority is down');
          const type = refused.get(request.principal.clientId ?? '');
          return type === undefined || (type !== '*' && type !== request.name);
        },
      },
      { authenticate },
    );
    webhooks.start();
  });
  afterAll(async () => {
    await server?.close();
    await webhooks?.stop();
    await receiver?.close();
  });
  beforeEach(() => {
    asked.length = 0;
    refused.clear();
    failing = false;
  });

  async function stagedTask(who: string, gate: string) {
    const peer = eventsPeer(server.http.url, { authorization: `Bearer ${who}` });
    const created = await peer.request('tools/call', { name: 'staged', arguments: { stages: 1, stageMs: 1, gate } });
    const taskId = created.result?.['taskId'] as string;
    expect(taskId).toBeTypeOf('string');
    const cursor = (created.result?.['eventSource'] as { initialCursor: string }).initialCursor;
    return { peer, taskId, cursor };
  }

  /** A gated task of `who` and its STAGE events streamed from the start. */
  async function streamedTask(who: string, gate: string) {
    const { taskId, cursor } = await stagedTask(who, gate);
    const headers = { authorization: `Bearer ${who}` };
    const stream = await openStream(server.http.url, { name: STAGE, arguments: { taskId }, cursor }, { headers });
    return { taskId, stream };
  }

  it('asks at every poll, stream and subscribe with the principal, the type and its arguments; a refusal is -32012', async () => {
    const { peer, taskId } = await stagedTask('alice', 'access-1');
    const poll = await peer.request('events/poll', { name: STAGE, arguments: { taskId } });
    expect(poll.error).toBeUndefined();
    expect(asked).toEqual([{ principal: { clientId: 'alice', subject: null }, name: STAGE, arguments: { taskId } }]);

    refused.set('alice', STAGE);
    const refusedPoll = await peer.request('events/poll', { name: STAGE, arguments: { taskId } });
    expect(refusedPoll.error).toEqual({
      code: -32012,
      message: `Forbidden: not permitted to receive ${STAGE} events`,
      data: { reason: 'not_permitted' },
    });
    // Another type of the same task is the authorizer's to decide separately.
    expect((await peer.request('events/poll', { name: NOTE, arguments: { taskId } })).error).toBeUndefined();
    // A refused stream never opens (spec V44): the refusal is the answer.
    const stream = await openStream(
      server.http.url,
      { name: STAGE, arguments: { taskId } },
      { headers: { authorization: 'Bearer alice' } },
    );
    await stream.done;
    expect(stream.messages).toHaveLength(1);
    expect((stream.messages[0]?.error as { code?: number } | undefined)?.code).toBe(-32012);
    const subscribe = await peer.request('events/subscribe', {
      name: STAGE,
      arguments: { taskId },
      delivery: { mode: 'webhook', url: receiver.url, secret: generateWebhookSecret() },
    });
    expect(subscribe.error?.code).toBe(-32012);
    // An unknown type is still unknown (-32011), not forbidden: the authorizer is not asked about it.
    const count = asked.length;
    const unknown = await peer.request('events/poll', { name: 'com.example.nope', arguments: { taskId } });
    expect(unknown.error?.code).toBe(-32011);
    expect(asked).toHaveLength(count);
    // Unsubscribing is never refused: a principal that lost access can still remove what it has.
    const unsubscribe = await peer.request('events/unsubscribe', {
      name: STAGE,
      arguments: { taskId },
      delivery: { url: receiver.url },
    });
    expect(unsubscribe.error?.code).toBe(-32011);
    gates.get('access-1')();
  });

  it('answers -32603 when the authorizer fails, and serves nothing', async () => {
    const { peer, taskId } = await stagedTask('carol', 'access-2');
    failing = true;
    const poll = await peer.request('events/poll', { name: STAGE, arguments: { taskId } });
    expect(poll.error).toEqual({
      code: -32603,
      message: 'Access to this event type could not be checked; try again',
    });
    gates.get('access-2')();
  });

  it('ends a live push stream with terminated (-32012) once the principal’s access is revoked', async () => {
    const { taskId, stream } = await streamedTask('dave', 'access-3');
    await stream.next(method('notifications/events/active'));
    await stream.next(method('notifications/events/event'));
    refused.set('dave', '*');
    const terminated = await stream.next(method('notifications/events/terminated'), 5_000);
    expect(terminated.params?.['error']).toEqual(REVOKED);
    await stream.done;
    // Re-verified against the same principal, type and arguments it was opened with.
    expect(asked.at(-1)).toEqual({
      principal: { clientId: 'dave', subject: null },
      name: STAGE,
      arguments: { taskId },
    });
    gates.get('access-3')();
  });

  it('keeps a live stream open while the authorizer cannot answer (an unreachable authority revokes nothing)', async () => {
    const { stream } = await streamedTask('erin', 'access-4');
    await stream.next(method('notifications/events/event'));
    failing = true;
    const asks = asked.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(asked.length).toBeGreaterThan(asks);
    gates.get('access-4')();
    const terminated = await stream.next(method('notifications/events/terminated'), 5_000);
    // Ended by the task's end, not by the failing authority.
    expect((terminated.params?.['error'] as { code: number }).code).toBe(-32011);
    await stream.done;
  });

  it('ends a task’s webhook subscription with a signed terminated (-32012) on its next event after a revocation', async () => {
    const { peer, taskId } = await stagedTask('frank', 'access-5');
    const secret = generateWebhookSecret();
    const subscribed = await peer.request('events/subscribe', {
      name: TASK_STATUS_EVENT,
      arguments: { taskId },
      delivery: { mode: 'webhook', url: receiver.url, secret },
    });
    expect(subscribed.error).toBeUndefined();
    const before = receiver.deliveries().length;
    refused.set('frank', '*');
    await new Promise((resolve) => setTimeout(resolve, 150)); // past reverifyMs: the subscribe's answer is stale
    gates.get('access-5')();
    await receiver.waitFor(before + 1, 10_000);
    const mine = () =>
      receiver
        .deliveries()
        .filter((delivery) => {
          try {
            verifyWebhook(delivery.headers, delivery.body, secret);
            return true;
          } catch {
            return false;
          }
        })
        .map((delivery) => delivery.json);
    const ended = async () => {
      for (let waited = 0; waited < 10_000; waited += 50) {
        const found = mine().find((json) => json['type'] === 'terminated');
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no terminated: ${JSON.stringify(mine())}`);
    };
    expect((await ended())['error']).toEqual(REVOKED);
    // One ending: the task's own end found the subscription gone already.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mine().filter((json) => json['type'] === 'terminated')).toHaveLength(1);
    expect(await webhooks.list('frank')).toEqual([]);
  });
});

describe('a push stream ends when the credential it was opened with expires (spec V65)', () => {
  let server: EventsServer;
  beforeAll(async () => {
    // Tokens of the form `<name>.<ms to live>`: the credential's expiry is what authentication says (in seconds).
    server = await startEventsServer(
      new MemoryStore(),
      {},
      {
        authenticate: (request: Request) => {
          const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
          if (!token) return undefined;
          const [name, ttl] = token.split('.');
          return { token, clientId: name!, scopes: [], expiresAt: (Date.now() + Number(ttl)) / 1000 };
        },
      },
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sends terminated (-32012, credentials_expired) at the expiry, then the final frame', async () => {
    const token = 'gina.1500';
    const peer = eventsPeer(server.http.url, { authorization: `Bearer ${token}` });
    const created = await peer.request('tools/call', {
      name: 'staged',
      arguments: { stages: 1, stageMs: 1, gate: 'expiry-1' },
    });
    const taskId = created.result?.['taskId'] as string;
    const cursor = (created.result?.['eventSource'] as { initialCursor: string }).initialCursor;
    const opened = Date.now();
    const stream = await openStream(
      server.http.url,
      { name: STAGE, arguments: { taskId }, cursor },
      { headers: { authorization: `Bearer ${token}` } },
    );
    await stream.next(method('notifications/events/event'));
    const terminated = await stream.next(method('notifications/events/terminated'), 10_000);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(1_000);
    expect(terminated.params?.['error']).toEqual({
      code: -32012,
      message: 'Forbidden: the credentials this stream was opened with have expired',
      data: { reason: 'credentials_expired' },
    });
    await stream.done;
    expect(stream.messages.at(-1)?.result).toBeDefined();
    gates.get('expiry-1')();
  });
});
