// Beside a task's timeline: its event log and its webhook deliveries (attempts, last status, next retry); and the
// subscriptions page across owners. Console tokens only; every server-supplied string is shown as text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { webhookEventOf } from '../../src/events/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import {
  ADMIN_TOKEN,
  chromiumAvailable,
  FINDING,
  FINDING_TYPE,
  open,
  READONLY_TOKEN,
  started,
  startConsoleHarness,
  type ConsoleHarness,
} from './consoleHarness.js';

const available = chromiumAvailable();
const HOSTILE = '<img src=x onerror=window.pwned=1> <b>bold?</b>';

describe.skipIf(!available)('a task’s events and webhook deliveries in the console', () => {
  let h: ConsoleHarness;
  let receiver: WebhookReceiver;
  let webhooks: OutboxWebhookDeliveries;
  let taskId: string;
  let subscriptionId: string;
  let hookUrl: string;

  beforeAll(async () => {
    receiver = await webhookReceiver();
    // Every delivery fails, so the outbox keeps them with their attempts and next retry.
    receiver.answers = Array.from({ length: 50 }, () => 500);
    const store = new MemoryStore();
    webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
      limits: { pollMs: 20, retryDelaysMs: [120_000] },
    });
    webhooks.start();
    h = await startConsoleHarness({ store, events: { types: [FINDING_TYPE], webhooks } });

    const client = await h.client('2025-11-25');
    const handle = await client.callTool('emitter', { titles: [HOSTILE, 'plain finding'] });
    taskId = await started(h, handle);
    const log = h.tasks.engine.store.eventLog;
    const findings = async () => ((await log?.read(taskId, 0, 100)) ?? []).filter((event) => event.type === FINDING);
    for (const deadline = Date.now() + 10_000; (await findings()).length < 2 && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const task = await h.tasks.engine.store.get(taskId);
    if (!task) throw new Error('no task');
    // As events/subscribe does: subscribe for the task's owner, then replay what the log holds already.
    hookUrl = `${receiver.origin}/hooks/"><script>window.pwned=2</script>`;
    const subscribed = await webhooks.subscribe({
      owner: task.owner,
      name: FINDING,
      arguments: { taskId },
      url: hookUrl,
      secret: generateWebhookSecret(),
      cursor: null,
      scope: taskId,
    });
    subscriptionId = subscribed.id;
    const events = await findings();
    await webhooks.publishTo(
      task.owner,
      subscriptionId,
      events.map((event) => webhookEventOf(task, event)),
    );
    await receiver.waitFor(2);
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    await webhooks?.stop();
    await receiver?.close();
  });

  it('shows the event log and the deliveries beside the timeline, as text', async () => {
    const { page } = await open(h, ADMIN_TOKEN, { viewport: { width: 1400, height: 900 } });
    await page.goto(`${h.consoleUrl}#/task/${taskId}`);
    const events = page.locator('section.events');
    await events.locator('ol.events li').first().waitFor();
    // The hostile title is shown as it is, and nothing in it ran or became markup.
    await events.locator('pre.event-data', { hasText: HOSTILE }).waitFor();
    await events.locator('pre.event-data', { hasText: 'plain finding' }).waitFor();
    expect(await events.locator('code.type', { hasText: FINDING }).count()).toBe(2);
    expect(await page.locator('main img, main script, main b').count()).toBe(0);
    expect(await page.evaluate('window.pwned')).toBeUndefined();

    const sub = page.locator(`section.webhooks [data-subscription="${subscriptionId}"]`);
    await sub.waitFor();
    expect(await sub.locator('.url').textContent()).toBe(new URL(hookUrl).href);
    // Both deliveries failed once with the receiver's 500 and wait for their retry.
    const rows = sub.locator('table.deliveries tbody tr');
    await expect.poll(async () => rows.locator('td:nth-child(4)', { hasText: /^500$/ }).count()).toBe(2);
    const first = rows.first().locator('td');
    expect(await first.nth(1).textContent()).toBe('event');
    expect(Number(await first.nth(2).textContent())).toBeGreaterThanOrEqual(1);
    expect(await first.nth(4).textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
    expect(await sub.locator('dd', { hasText: /^active$/ }).count()).toBe(1);

    // Beside the timeline at 1400 px: the two columns start at the same height.
    const timelineBox = await page.locator('section[aria-labelledby="timeline-title"]').boundingBox();
    const eventsBox = await events.boundingBox();
    expect(timelineBox && eventsBox && Math.abs(timelineBox.y - eventsBox.y) < 2).toBe(true);
    expect(timelineBox && eventsBox && eventsBox.x > timelineBox.x + timelineBox.width - 1).toBe(true);
    expect(await page.evaluate('window.pwned')).toBeUndefined();
  });

  it('lists the subscriptions, for the read-only token too, and to nobody without one', async () => {
    const { page } = await open(h, READONLY_TOKEN);
    await page.goto(`${h.consoleUrl}#/subscriptions`);
    const row = page.locator(`tr[data-subscription="${subscriptionId}"]`);
    await row.waitFor();
    const cells = row.locator('td');
    const task = await h.tasks.engine.store.get(taskId);
    expect(await cells.nth(0).getAttribute('title')).toBe(task?.owner);
    expect(await cells.nth(1).textContent()).toBe(FINDING);
    expect(await cells.nth(2).textContent()).toBe(new URL(hookUrl).href);
    expect(await cells.nth(3).textContent()).toMatch(/^active/);
    expect(await cells.nth(5).textContent()).toBe('2');
    expect(await cells.nth(6).locator('a').getAttribute('href')).toBe(`#/task/${encodeURIComponent(taskId)}`);
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(await page.evaluate('window.pwned')).toBeUndefined();

    const anonymous = await fetch(`${h.consoleUrl}api/subscriptions`);
    expect(anonymous.status).toBe(401);
    const task404 = await fetch(`${h.consoleUrl}api/tasks/${taskId}`);
    expect(task404.status).toBe(401);
    // The JSON never carries the subscription's signing secrets.
    const json = await (
      await fetch(`${h.consoleUrl}api/tasks/${taskId}`, { headers: { authorization: `Bearer ${READONLY_TOKEN}` } })
    ).text();
    expect(json).toContain(subscriptionId);
    expect(json).not.toContain('whsec_');
  });
});
