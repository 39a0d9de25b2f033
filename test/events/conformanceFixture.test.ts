import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  CONFORMANCE_CALLBACK_PREFIX,
  fixtureEvents,
  STAGE_EVENT,
} from '../../examples/conformance/fixtureEventTools.js';
import { createFixtureServer, FIXTURE_POLICIES } from '../../examples/conformance/fixtureTools.js';
import { TaskClient, textOf, type TaskEvent } from '../../src/client/index.js';
import type { OutboxWebhookDeliveries } from '../../src/events/webhooks/index.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { eventsPeer } from './eventsPeer.js';

/** The conformance fixture's tools, policies and events option (what MCP_TASKS_EVENTS=1 serves on a memory store). */
describe('the conformance fixture’s staged_compute (Task Event Sources, EVENTS-SPEC §14)', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  let client: TaskClient;
  let webhooks: OutboxWebhookDeliveries | undefined;

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
    client = await TaskClient.connect({ url: http.url, headers: { authorization: 'Bearer alice' } });
  });
  afterAll(async () => {
    await webhooks?.stop();
    await client.close();
    await http.close();
    await tasks.close();
  });

  it('TS1 TS6: its task names the stage type as its event source and emits one event per stage, then its result', async () => {
    const handle = await client.callTool('staged_compute', { stages: 3, stageMs: 30 });
    expect(handle.isTask).toBe(true);
    expect(handle.eventSource).toMatchObject({ name: STAGE_EVENT, input: { taskId: handle.taskId } });
    const events: TaskEvent[] = [];
    for await (const event of handle.events()) events.push(event);
    expect(events.map((event) => event.name)).toEqual([STAGE_EVENT, STAGE_EVENT, STAGE_EVENT]);
    expect(events.map((event) => event.data)).toEqual([
      { stage: 1, of: 3 },
      { stage: 2, of: 3 },
      { stage: 3, of: 3 },
    ]);
    expect(textOf(await handle.result())).toBe('staged_compute: 3 stages done');
  });

  it('refuses stages out of range with a tool error', async () => {
    const handle = await client.callTool('staged_compute', { stages: 0 });
    // A tool error ends the task failed, with the tool's message.
    await expect(handle.result()).rejects.toThrow('stages must be an integer from 1 to 100');
  });

  it('§14: a callback under https://conformance.invalid/mcp-events/ subscribes without a handshake', async () => {
    const alice = eventsPeer(http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', {
      name: 'staged_compute',
      arguments: { stages: 1, stageMs: 10_000 },
    });
    const taskId = created.result?.['taskId'] as string;
    const subscribed = await alice.request('events/subscribe', {
      name: STAGE_EVENT,
      arguments: { taskId },
      delivery: { mode: 'webhook', url: `${CONFORMANCE_CALLBACK_PREFIX}stages`, secret: generateWebhookSecret() },
    });
    expect(subscribed.error, JSON.stringify(subscribed.error)).toBeUndefined();
    expect(subscribed.result).toMatchObject({ resultType: 'complete', id: expect.any(String) });
    // Elsewhere on that host is not consented to: it would need the handshake, which cannot reach it.
    const elsewhere = await alice.request('events/subscribe', {
      name: STAGE_EVENT,
      arguments: { taskId },
      delivery: { mode: 'webhook', url: 'https://conformance.invalid/other', secret: generateWebhookSecret() },
    });
    expect(elsewhere.error?.code).toBe(-32015);
    await alice.request('tasks/cancel', { taskId });
  });

  it('lists the stream controls among the fixture’s tools', async () => {
    const listed = await eventsPeer(http.url, { authorization: 'Bearer alice' }).request('tools/list');
    const names = (listed.result?.['tools'] as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['staged_compute', 'events_conformance_yield_error', 'events_conformance_webhook_gap']),
    );
  });
});
