import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  CLOCK_EVENT,
  CONFORMANCE_CALLBACK_PREFIX,
  fixtureEvents,
  SPARE_EVENT,
  SPARE_MAX_SUBSCRIPTIONS,
  startClock,
} from '../../examples/conformance/fixtureEventTools.js';
import { createFixtureServer, FIXTURE_POLICIES } from '../../examples/conformance/fixtureTools.js';
import type { OutboxWebhookDeliveries } from '../../src/events/webhooks/index.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import type { ModernPeer } from '../helpers/rawWire.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

/** The conformance fixture with MCP_TASKS_EVENTS=1 on a memory store: its clock type and the §14 controls. */
describe('the conformance fixture’s clock type and subscription, quota and restart controls (EVENTS-SPEC §3, §14)', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  let webhooks: OutboxWebhookDeliveries | undefined;
  let stopClock: () => void;
  let alice: ModernPeer;

  beforeAll(async () => {
    const store = new MemoryStore();
    const served = await fixtureEvents(store);
    webhooks = served.webhooks;
    tasks = await createMcpTasks({
      server: createFixtureServer,
      tools: FIXTURE_POLICIES,
      store,
      events: served.events,
    });
    http = await serveHttp(tasks, {
      port: 0,
      authenticate: ((request: Request) => {
        const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
        return token ? { token, clientId: token, scopes: [] } : undefined;
      }) as never,
    });
    webhooks?.start();
    stopClock = startClock(tasks, 100);
    alice = eventsPeer(http.url, { authorization: 'Bearer alice' });
  });
  afterAll(async () => {
    stopClock();
    await webhooks?.stop();
    await http.close();
    await tasks.close();
  });

  const control = async (name: string, args: Record<string, unknown> = {}) => {
    const answer = await alice.request('tools/call', { name, arguments: args });
    expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    return (answer.result?.['content'] as Array<{ text: string }>)[0]?.text as string;
  };

  it('§3 practice: the first type listed takes no arguments, offers poll, push and webhook, and emits on its cadence', async () => {
    const listed = await alice.request('events/list', {});
    const [first] = listed.result?.['events'] as Array<Record<string, unknown>>;
    expect(first).toMatchObject({ name: CLOCK_EVENT, delivery: ['poll', 'push', 'webhook'] });
    expect((first?.['inputSchema'] as { required?: unknown[] }).required ?? []).toEqual([]);
    const cursor = (await alice.request('events/poll', { name: CLOCK_EVENT, cursor: null })).result?.['cursor'];
    await expect
      .poll(
        async () =>
          ((await alice.request('events/poll', { name: CLOCK_EVENT, cursor })).result?.['events'] as unknown[]).length,
        { timeout: 10_000 },
      )
      .toBeGreaterThan(0);
  });

  it('V66 §10: subscribe_as subscribes another principal; exists and state see it; the caller’s own key is another', async () => {
    const url = `${CONFORMANCE_CALLBACK_PREFIX}as-bob`;
    const id = await control('events_conformance_subscribe_as', { principal: 'bob', name: CLOCK_EVENT, url });
    expect(id).toMatch(/^sub_/);
    expect(await control('events_conformance_subscription_exists', { principal: 'bob', name: CLOCK_EVENT, url })).toBe(
      'true',
    );
    expect(
      await control('events_conformance_subscription_exists', { principal: 'alice', name: CLOCK_EVENT, url }),
    ).toBe('false');
    expect(await control('events_conformance_subscription_state', { id })).toBe('active');
    // spec V109: Alice's unsubscribe of the same (name, url) touches nothing of Bob's.
    const unsubscribed = await alice.request('events/unsubscribe', { name: CLOCK_EVENT, delivery: { url } });
    expect(unsubscribed.error?.code).toBe(-32011);
    const mine = await alice.request('events/subscribe', {
      name: CLOCK_EVENT,
      delivery: { mode: 'webhook', url, secret: generateWebhookSecret() },
    });
    expect(mine.result?.['id']).not.toBe(id);
    expect(await control('events_conformance_subscription_state', { id: 'sub_unknown' })).toBe('absent');
    await control('events_conformance_webhook_terminate', { id });
    expect(await control('events_conformance_subscription_state', { id })).toBe('absent');
  });

  it('V115: quota names the spare type and its cap; one subscription more is -32013', async () => {
    expect(JSON.parse(await control('events_conformance_quota'))).toEqual({
      name: SPARE_EVENT,
      max: SPARE_MAX_SUBSCRIPTIONS,
    });
    const subscribe = (n: number) =>
      alice.request('events/subscribe', {
        name: SPARE_EVENT,
        delivery: { mode: 'webhook', url: `${CONFORMANCE_CALLBACK_PREFIX}quota-${n}`, secret: generateWebhookSecret() },
      });
    for (let n = 1; n <= SPARE_MAX_SUBSCRIPTIONS; n++) expect((await subscribe(n)).error).toBeUndefined();
    expect((await subscribe(SPARE_MAX_SUBSCRIPTIONS + 1)).error).toMatchObject({
      code: -32013,
      data: { limit: 'subscriptions', max: SPARE_MAX_SUBSCRIPTIONS },
    });
  });

  it('§12: restart moves to the next generation, ends live streams, turns old cursors stale; webhook subscriptions live on', async () => {
    expect(await control('events_conformance_generation')).toBe('1');
    const url = `${CONFORMANCE_CALLBACK_PREFIX}restart`;
    const id = await control('events_conformance_subscribe_as', { principal: 'carol', name: CLOCK_EVENT, url });
    const cursor = (await alice.request('events/poll', { name: CLOCK_EVENT, cursor: null })).result?.['cursor'];
    const stream = await openStream(http.url, { name: CLOCK_EVENT }, { headers: { authorization: 'Bearer alice' } });
    await stream.next(method('notifications/events/active'));
    expect(await control('events_conformance_restart')).toBe('2');
    await stream.done;
    expect(stream.messages.find(method('notifications/events/terminated'))?.params?.['error']).toMatchObject({
      data: { reason: 'restart' },
    });
    expect(stream.messages.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
    expect(await control('events_conformance_generation')).toBe('2');
    const stale = await alice.request('events/poll', { name: CLOCK_EVENT, cursor });
    expect(stale.error).toBeUndefined();
    expect(stale.result?.['truncated']).toBe(true);
    expect(stale.result?.['cursor']).not.toBe(cursor);
    expect(await control('events_conformance_subscription_state', { id })).toBe('active');
  });
});
