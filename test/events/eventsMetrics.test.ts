import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';
import { webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import { createEventsServer, EVENT_TYPES, STAGE } from './eventsServer.js';
import { eventsPeer } from './eventsPeer.js';

/** The value of one series in the Prometheus text, 0 when absent. */
function value(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('metrics of events and webhook deliveries', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  let receiver: WebhookReceiver;
  let webhooks: OutboxWebhookDeliveries;

  beforeAll(async () => {
    receiver = await webhookReceiver();
    const store = new SqliteStore({ path: join(tempDir(), 'metrics.db') });
    await store.init();
    await store.webhooks.init();
    webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
      limits: { pollMs: 50, retryDelaysMs: [50, 50, 50] },
      // The runtime's metrics count what this process's sender attempts.
      onAttempt: (attempt) => tasks.metrics?.webhookAttempt(attempt),
    });
    tasks = await createMcpTasks({
      server: createEventsServer,
      tools: { staged: 'optional' },
      store,
      metrics: true,
      events: { types: EVENT_TYPES, webhooks },
    });
    http = await serveHttp(tasks, {
      port: 0,
      authenticate: ((request: Request) => {
        const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
        return token ? { token, clientId: token, scopes: [] } : undefined;
      }) as never,
    });
    webhooks.start();
  });
  afterAll(async () => {
    await webhooks.stop();
    await http.close();
    await tasks.close();
    await receiver.close();
  });

  it('counts entries appended by type, webhook attempts by outcome, and failures by reason', async () => {
    const alice = eventsPeer(http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', { name: 'staged', arguments: { stages: 2, stageMs: 600 } });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    const source = created.result?.['eventSource'] as Record<string, unknown>;
    receiver.answers.push(503); // the first delivery fails once, then goes through on its retry
    const subscribed = await alice.request('events/subscribe', {
      name: STAGE,
      arguments: source['input'],
      cursor: source['initialCursor'],
      delivery: { mode: 'webhook', url: receiver.url, secret: generateWebhookSecret() },
    });
    expect(subscribed.error, JSON.stringify(subscribed.error)).toBeUndefined();
    await expect
      .poll(() => receiver.deliveries().filter((d) => d.json['type'] === 'terminated').length, { timeout: 15_000 })
      .toBe(1);
    // The sender counts an attempt once its answer is read, a moment after the receiver recorded the request.
    const terminatedCounted = async () =>
      value(
        (await tasks.metrics?.text()) ?? '',
        'mcp_tasks_webhook_deliveries_total',
        'kind="terminated",outcome="delivered"',
      );
    await expect.poll(terminatedCounted, { timeout: 5_000 }).toBe(1);
    const text = (await tasks.metrics?.text()) ?? '';
    expect(value(text, 'mcp_tasks_events_appended_total', `type="${STAGE}"`)).toBe(2);
    expect(
      value(text, 'mcp_tasks_events_appended_total', 'type="io.github.mcp-tasks.task_status"'),
    ).toBeGreaterThanOrEqual(1);
    expect(value(text, 'mcp_tasks_webhook_deliveries_total', 'kind="event",outcome="delivered"')).toBe(2);
    expect(value(text, 'mcp_tasks_webhook_deliveries_total', 'kind="event",outcome="failed"')).toBe(1);
    expect(value(text, 'mcp_tasks_webhook_failures_total', 'reason="http_5xx"')).toBe(1);
    expect(value(text, 'mcp_tasks_webhook_deliveries_total', 'kind="terminated",outcome="delivered"')).toBe(1);
  });
});
