import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serveConsole, type ConsoleServerHandle } from '../../src/console/index.js';
import { TASK_STATUS_EVENT } from '../../src/engine/index.js';
import { encodeTaskEventCursor } from '../../src/events/index.js';
import { CallbackPolicy } from '../../src/events/webhooks/CallbackPolicy.js';
import { OutboxWebhookDeliveries } from '../../src/events/webhooks/OutboxWebhookDeliveries.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { openStandaloneConsole, type StandaloneConsole } from '../../src/server/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { eventually } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { inLogOrder, webhookReceiver, type WebhookReceiver } from '../webhooks/webhookReceiver.js';
import { authenticate, gates, STAGE, startEventsServer, type EventsServer } from './eventsServer.js';
import { eventsPeer } from './eventsPeer.js';

const SILENT = { info() {}, warn() {}, error() {} };
const TOKEN = 'console-admin-token-0123456789';

/**
 * The standalone console (`mcp-tasks console`) runs its own engine over the servers' store. A task it cancels ends as
 * a cancel on a server would: its `cancelled` status entry is in the task's log for every instance's readers, and its
 * webhook subscriptions, of the runtime's status type and of the author's types alike, get the entry and then
 * `terminated` (spec TS8), delivered by the server's sender.
 */
describe('a cancel from the standalone console, as events', () => {
  const path = join(tempDir(), 'console-events.db');
  // One endpoint per subscription, so what each got is told apart.
  let receiver: WebhookReceiver;
  let stageReceiver: WebhookReceiver;
  let webhooks: OutboxWebhookDeliveries;
  let server: EventsServer;
  let store: SqliteStore;
  let standalone: StandaloneConsole;
  let running: ConsoleServerHandle;

  beforeAll(async () => {
    receiver = await webhookReceiver();
    stageReceiver = await webhookReceiver();
    const serverStore = new SqliteStore({ path });
    await serverStore.init();
    await serverStore.webhooks.init();
    webhooks = new OutboxWebhookDeliveries({
      store: serverStore.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin, stageReceiver.origin] }),
      limits: { pollMs: 20 },
    });
    server = await startEventsServer(serverStore, { webhooks }, { authenticate });
    webhooks.start();
    store = new SqliteStore({ path });
    standalone = await openStandaloneConsole(store, { token: TOKEN }, SILENT);
    running = await serveConsole(standalone.taskConsole, { port: 0 });
  });
  afterAll(async () => {
    await running?.close();
    standalone?.close();
    await store?.close();
    await webhooks?.stop();
    await server?.close();
    await receiver?.close();
    await stageReceiver?.close();
    gates.get('console-cancel')?.();
  });

  it('TS8: poll sees the cancelled entry; both webhook subscriptions get it or end, from a process that knows no types', async () => {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', {
      name: 'staged',
      arguments: { stages: 0, stageMs: 0, gate: 'console-cancel' },
    });
    const taskId = created.result?.['taskId'] as string;
    await eventually(() => gates.has('console-cancel'));
    const from = encodeTaskEventCursor(taskId, 0);
    for (const [name, url] of [
      [TASK_STATUS_EVENT, receiver.url],
      [STAGE, stageReceiver.url],
    ] as const) {
      const subscribed = await alice.request('events/subscribe', {
        name,
        arguments: { taskId },
        cursor: from,
        delivery: { mode: 'webhook', url, secret: generateWebhookSecret() },
      });
      expect(subscribed.error).toBeUndefined();
    }

    const response = await fetch(`${running.url}api/tasks/${encodeURIComponent(taskId)}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'x-console-request': '1' },
    });
    expect(response.status).toBe(200);

    const polled = async () => {
      const answer = await alice.request('events/poll', {
        name: TASK_STATUS_EVENT,
        arguments: { taskId },
        cursor: from,
      });
      return ((answer.result?.['events'] ?? []) as Array<{ data: { status: string } }>).map((e) => e.data.status);
    };
    await expect.poll(polled, { timeout: 5000 }).toContain('cancelled');

    const seen = (entries: Parameters<typeof inLogOrder>[0]) =>
      inLogOrder(entries).map((entry) => (entry.json['type'] === 'terminated' ? 'terminated' : entry.json['data']));
    expect(seen(await receiver.waitFor(2, 10_000))).toEqual([
      expect.objectContaining({ status: 'cancelled' }),
      'terminated',
    ]);
    const stage = await stageReceiver.waitFor(1, 10_000);
    expect(seen(stage)).toEqual(['terminated']);
    expect(stage[0]?.json['error']).toMatchObject({ data: { reason: 'task_terminal', taskId, status: 'cancelled' } });
  });
});
