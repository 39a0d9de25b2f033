import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type {
  TerminationError,
  WebhookDeliveries,
  WebhookEvent,
  WebhookKey,
  WebhookSubscribeInput,
} from '../../src/events/index.js';
import { WebhookError } from '../../src/events/webhooks/WebhookError.js';
import { eventually } from '../helpers/rawWire.js';
import { gates, STAGE, startEventsServer, type EventsServer, authenticate } from './eventsServer.js';
import { eventsPeer } from './eventsPeer.js';

/**
 * Records what the events front asks of webhook delivery (whose own behaviour, signing and the outbox, is tested with
 * it): the front's part is the checks before, the key and cursor it passes, the replay, the publishing of each
 * appended event and the ending of a task's subscriptions.
 */
class RecordingDeliveries implements WebhookDeliveries {
  subscribed: WebhookSubscribeInput[] = [];
  published: WebhookEvent[] = [];
  replayed: Array<{ owner: string; id: string; events: readonly WebhookEvent[] }> = [];
  terminated: Array<{ which: unknown; error: TerminationError }> = [];
  unsubscribed: WebhookKey[] = [];

  async subscribe(input: WebhookSubscribeInput) {
    if (input.owner === undefined)
      throw new WebhookError('forbidden', 'Webhook subscriptions need an authenticated principal');
    this.subscribed.push(input);
    return {
      id: 'sub_test',
      refreshBefore: null,
      cursor: input.cursor,
      truncated: input.truncated ?? false,
      deliveryStatus: {
        active: true,
        lastDeliveryAt: null,
        lastError: null,
        failedSince: null,
        throttled: false,
        retryAfterMs: 0,
      },
      created: this.subscribed.length === 1,
    };
  }
  async unsubscribe(key: WebhookKey) {
    if (!this.subscribed.some((s) => s.owner === key.owner && s.url === key.url))
      throw new WebhookError('not_found', 'No such subscription', { kind: 'subscription' });
    this.unsubscribed.push(key);
  }
  async publish(event: WebhookEvent) {
    this.published.push(event);
    return 1;
  }
  async publishTo(owner: string, id: string, events: readonly WebhookEvent[]) {
    this.replayed.push({ owner, id, events });
    return events.length;
  }
  async gap() {
    return false;
  }
  async terminate(which: { id: string } | { name: string; scope?: string }, error: TerminationError) {
    this.terminated.push({ which, error });
    return 1;
  }
  async state() {
    return 'absent' as const;
  }
  async list() {
    return [];
  }
  start() {}
  async stop() {}
}

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe('the events front with webhook delivery configured', () => {
  const webhooks = new RecordingDeliveries();
  let server: EventsServer;
  beforeAll(async () => {
    server = await startEventsServer('memory', { webhooks }, { authenticate });
  });
  afterAll(async () => server.close());

  it('V60 V66 V73 TS8: offers webhook, passes the key with the principal and the task as scope, replays from the cursor, publishes new events to the owner and ends the task’s subscriptions with it', async () => {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const listed = await alice.request('events/list');
    expect((listed.result?.['events'] as Array<{ delivery: string[] }>)[0]?.delivery).toEqual([
      'poll',
      'push',
      'webhook',
    ]);
    const gate = 'webhook-front';
    const created = await alice.request('tools/call', { name: 'staged', arguments: { stages: 2, stageMs: 1, gate } });
    const taskId = created.result?.['taskId'] as string;
    const source = created.result?.['eventSource'] as Record<string, unknown>;
    await eventually(() => gates.has(gate));
    const subscribed = await alice.request('events/subscribe', {
      name: STAGE,
      arguments: source['input'],
      cursor: source['initialCursor'],
      delivery: { mode: 'webhook', url: 'https://hooks.example.com/mcp', secret },
      ttlMs: 60_000,
    });
    expect(subscribed.result).toMatchObject({
      resultType: 'complete',
      id: 'sub_test',
      refreshBefore: null,
      truncated: false,
    });
    expect(subscribed.result?.['created']).toBeUndefined();
    expect(webhooks.subscribed[0]).toMatchObject({
      owner: expect.stringContaining('alice'),
      name: STAGE,
      arguments: { taskId },
      url: 'https://hooks.example.com/mcp',
      secret,
      ttlMs: 60_000,
      scope: taskId,
      cursor: source['initialCursor'],
    });
    // The two stages emitted before the subscribe are replayed to this subscription only.
    expect(webhooks.replayed[0]?.events.map((event) => event.occurrence.data)).toEqual([
      { index: 0, of: 2 },
      { index: 1, of: 2 },
    ]);
    expect(webhooks.replayed[0]?.owner).toBe(webhooks.subscribed[0]?.owner);
    // Every appended event was published with its owner and task, and a cursor.
    const stages = webhooks.published.filter((event) => event.occurrence.name === STAGE && event.scope === taskId);
    expect(stages.map((event) => event.occurrence.eventId)).toEqual([`${taskId}:0`, `${taskId}:1`]);
    for (const event of stages) {
      expect(event.owner).toBe(webhooks.subscribed[0]?.owner);
      expect(event.cursor).toBeTypeOf('string');
    }
    gates.get(gate)?.();
    const ending = await eventually(() =>
      webhooks.terminated.find(
        (entry) => JSON.stringify(entry.which) === JSON.stringify({ name: STAGE, scope: taskId }),
      ),
    );
    expect(ending.error).toMatchObject({
      code: -32011,
      data: { reason: 'task_terminal', taskId, status: 'completed' },
    });
  });

  it('V109: a webhook refusal keeps its code (an unknown key is -32011); a caller without a principal owns no task to subscribe to', async () => {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', { name: 'staged', arguments: { stages: 0, stageMs: 0 } });
    const taskId = created.result?.['taskId'] as string;
    const unknown = await alice.request('events/unsubscribe', {
      name: STAGE,
      arguments: { taskId },
      delivery: { url: 'https://hooks.example.com/other' },
    });
    expect(unknown.error).toMatchObject({ code: -32011, data: { kind: 'subscription' } });
    // Without a principal the caller owns no task either: the task check refuses first, as for a missing task.
    const anonymous = eventsPeer(server.http.url);
    const refused = await anonymous.request('events/subscribe', {
      name: STAGE,
      arguments: { taskId },
      delivery: { url: 'https://hooks.example.com/mcp', secret },
    });
    expect(refused.error?.code).toBe(-32602);
  });
  it('V64 V70: another principal’s task is refused as a missing one before delivery is asked; an `id` input addresses nothing', async () => {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const bob = eventsPeer(server.http.url, { authorization: 'Bearer bob' });
    const created = await alice.request('tools/call', { name: 'staged', arguments: { stages: 0, stageMs: 0 } });
    const taskId = created.result?.['taskId'] as string;
    const asked = webhooks.subscribed.length;
    const subscribeAs = (peer: typeof bob, id: string) =>
      peer.request('events/subscribe', {
        name: STAGE,
        arguments: { taskId: id },
        delivery: { url: 'https://hooks.example.com/bob', secret },
      });
    // spec V64: checked at subscribe time, every time: bob gets what a missing task gets, and delivery never hears.
    const foreign = await subscribeAs(bob, taskId);
    const missing = await subscribeAs(bob, 'no-such-task');
    expect(foreign.error?.code).toBe(missing.error?.code);
    expect(foreign.error?.message.replace(taskId, 'ID')).toBe(missing.error?.message.replace('no-such-task', 'ID'));
    expect(webhooks.subscribed.length).toBe(asked);
    // spec V70: an `id` beside the key is not an input: the key (principal, url, name, arguments) is all that is passed.
    const withId = await alice.request('events/subscribe', {
      name: STAGE,
      arguments: { taskId },
      id: 'sub_of_someone_else',
      delivery: { url: 'https://hooks.example.com/mcp', secret },
    });
    expect(withId.error).toBeUndefined();
    const passed = webhooks.subscribed.at(-1) as unknown as Record<string, unknown>;
    expect(passed['id']).toBeUndefined();
    expect(Object.values(passed)).not.toContain('sub_of_someone_else');
    const unsubscribed = await bob.request('events/unsubscribe', {
      name: STAGE,
      arguments: { taskId },
      id: 'sub_test',
      delivery: { url: 'https://hooks.example.com/bob' },
    });
    expect(unsubscribed.error).toMatchObject({ code: -32011, data: { kind: 'subscription' } });
  });
});
