import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { TaskStore } from '../../src/engine/index.js';
import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import type { WebhookEvent } from '../../src/events/webhooks/WebhookDeliveries.js';
import type { WebhookLimits } from '../../src/events/webhooks/WebhookLimits.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';
import { webhookReceiver, type WebhookReceiver } from './webhookReceiver.js';

const TYPE = 'io.github.mcp-tasks.task_status';
const ENDED = { code: -32011, message: 'Task ended', data: { kind: 'event', reason: 'task_terminal', taskId: 't-1' } };

const event = (n: number): WebhookEvent => ({
  occurrence: { eventId: `t-1:${n}`, name: TYPE, timestamp: new Date(1_000 + n).toISOString(), data: { n } },
  owner: 'alice',
  scope: 't-1',
  cursor: `c${n + 1}`,
});

const stores: Array<{ name: string; open(): TaskStore }> = [
  { name: 'memory', open: () => new MemoryStore() },
  { name: 'sqlite', open: () => new SqliteStore({ path: `${tempDir()}/ending.db` }) },
];

let receiver: WebhookReceiver;
const running: OutboxWebhookDeliveries[] = [];
const opened: TaskStore[] = [];

beforeEach(async () => {
  receiver = await webhookReceiver();
});
afterEach(async () => {
  for (const webhooks of running.splice(0)) await webhooks.stop();
  for (const store of opened.splice(0)) await store.close();
  await receiver.close();
});

/** What arrived, in order: the event id or `terminated`, and the receiver's answer. */
const arrivals = () =>
  receiver.deliveries().map((d) => [d.json['type'] === 'terminated' ? 'terminated' : d.json['eventId'], d.answer]);

for (const { name, open } of stores) {
  describe(`ending a webhook subscription with deliveries queued (${name})`, () => {
    async function subscribed(limits: Partial<WebhookLimits>) {
      const store = open();
      opened.push(store);
      await store.init();
      await store.webhooks!.init();
      const webhooks = new OutboxWebhookDeliveries({
        store: store.webhooks!,
        policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
        limits: { pollMs: 20, ...limits },
      });
      running.push(webhooks);
      const secret = generateWebhookSecret();
      const { id } = await webhooks.subscribe({
        owner: 'alice',
        name: TYPE,
        arguments: { taskId: 't-1' },
        url: receiver.url,
        secret,
        cursor: 'c0',
        scope: 't-1',
      });
      for (let n = 0; n < 3; n++) await webhooks.publish(event(n));
      // spec TS8: the task ended with 3 deliveries queued; nothing is sent yet (the loop has not started).
      expect(await webhooks.terminate({ name: TYPE, scope: 't-1' }, ENDED)).toBe(1);
      return { webhooks, store, secret, id };
    }

    // spec TS8, TS9, V87, V110: nothing queued before the end is dropped, and `terminated` comes after all of it.
    it('retries the queued deliveries through a failing receiver, then sends terminated after them', async () => {
      const { webhooks, secret, id } = await subscribed({ retryDelaysMs: [100, 200] });
      // The subscription takes nothing new and reads as ended; its queued deliveries are still there.
      expect(await webhooks.state('alice', id)).toBe('absent');
      expect(await webhooks.publish(event(3))).toBe(0);
      expect(await webhooks.gap(id, 'c9')).toBe(false);
      expect((await webhooks.list('alice'))[0]?.queued).toBe(4);
      // The receiver fails for a while: every first attempt and two retries.
      receiver.answers.push(503, 503, 503, 503, 503);
      webhooks.start();
      await expect
        .poll(() => arrivals().filter(([what]) => what === 'terminated').length, { timeout: 10_000, interval: 50 })
        .toBe(1);
      const got = arrivals();
      expect(got.at(-1)).toEqual(['terminated', 200]);
      const acknowledged = got.filter(([, answer]) => answer === 200).map(([what]) => what);
      expect(acknowledged.slice(0, 3).sort()).toEqual(['t-1:0', 't-1:1', 't-1:2']);
      expect(got.filter(([, answer]) => answer === 503)).toHaveLength(5);
      expect(got.some(([what]) => what === 't-1:3')).toBe(false);
      const envelope = receiver.deliveries().at(-1)!;
      expect(verifyWebhook(envelope.headers, envelope.body, secret).payload).toEqual({
        type: 'terminated',
        error: ENDED,
      });
      expect(envelope.headers['x-mcp-subscription-id']).toBe(id);
      // Gone once terminated went out.
      await expect.poll(() => webhooks.list('alice'), { timeout: 5_000 }).toEqual([]);
    });

    // spec V88, TS9: a delivery given up by the retry schedule counts as settled; terminated still follows.
    it('sends terminated after deliveries the retry schedule gave up', async () => {
      const { webhooks } = await subscribed({ retryDelaysMs: [50], maxAttempts: 2 });
      receiver.answers.push(503, 503, 503, 503, 503, 503);
      webhooks.start();
      await expect
        .poll(() => arrivals().filter(([what]) => what === 'terminated').length, { timeout: 10_000, interval: 50 })
        .toBe(1);
      const got = arrivals();
      expect(
        got
          .slice(0, -1)
          .map(([what]) => what)
          .sort(),
      ).toEqual(['t-1:0', 't-1:0', 't-1:1', 't-1:1', 't-1:2', 't-1:2']);
      expect(got.at(-1)).toEqual(['terminated', 200]);
    });

    // spec V93, V80: suspension drops what is left, as for any delivery; the ending is still announced.
    it('drops what a suspension leaves, then sends terminated', async () => {
      const { webhooks } = await subscribed({
        retryDelaysMs: [50],
        suspendAfterAttempts: 2,
        suspendFailureRatio: 0.5,
      });
      receiver.answers.push(503, 503, 503, 503, 503, 503);
      webhooks.start();
      await expect
        .poll(() => arrivals().filter(([what]) => what === 'terminated').length, { timeout: 10_000, interval: 50 })
        .toBe(1);
      const got = arrivals();
      expect(got.at(-1)?.[0]).toBe('terminated');
      // Suspended after its second failed attempt: fewer than the 3 events' attempts went out, none acknowledged.
      expect(got.slice(0, -1).every(([, answer]) => answer === 503)).toBe(true);
      await expect.poll(() => webhooks.list('alice'), { timeout: 5_000 }).toEqual([]);
    });
  });
}
