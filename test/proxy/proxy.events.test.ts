import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, TaskNotSupportedError, TaskRpcError, textOf, type TaskEvent } from '../../src/client/index.js';
import { CallbackPolicy, OutboxWebhookDeliveries } from '../../src/events/webhooks/index.js';
import { verifyWebhook } from '../../src/events/webhooks/verifyWebhook.js';
import { generateWebhookSecret } from '../../src/events/webhooks/webhookSecret.js';
import { startProxy } from '../../src/proxy/index.js';
import { MemoryStore } from '../../src/stores/memory/MemoryStore.js';
import { inLogOrder, webhookReceiver } from '../webhooks/webhookReceiver.js';
import { createMcpTasks, serveHttp } from '../../src/server/index.js';
import { eventsPeer, openStream } from '../events/eventsPeer.js';
import {
  createEventsServer,
  EVENT_TYPES,
  gates,
  NOTE,
  STAGE,
  startEventsServer,
  type EventsServer,
} from '../events/eventsServer.js';
import { eventually } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { createJwtIssuer, type JwtIssuer } from './helpers/jwtIssuer.js';
import { startProxyProcess, until, type ProxyProcess } from './helpers/proxyProcess.js';

/**
 * The upstream's events passed through the proxy (docs/proxy.md, "Events"): the proxy registers the upstream's
 * task-scoped types, names the event source on its tasks, and its task work re-emits the upstream task's events into
 * the proxy task's own log, in order, each once; a second caller gets what a missing task gets; an upstream without
 * Events is served as before. The upstream is this project's server with Events, the proxy a real process over HTTP.
 */
const dir = tempDir('mcp-tasks-proxy-events-');
let issuer: JwtIssuer;
let config: string;
let upstream: EventsServer;
const closers: Array<() => Promise<unknown>> = [];

async function caller(url: string, sub: string): Promise<TaskClient> {
  const client = await TaskClient.connect({ url, headers: { authorization: `Bearer ${await issuer.token(sub)}` } });
  closers.push(() => client.close());
  return client;
}

async function collect(events: AsyncIterable<TaskEvent>): Promise<TaskEvent[]> {
  const seen: TaskEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

beforeAll(async () => {
  issuer = await createJwtIssuer('https://auth.example.com', 'https://proxy.example.com/mcp', 'k1');
  config = join(dir, 'jwt.json');
  writeFileSync(config, JSON.stringify({ auth: { jwt: issuer.config } }));
  upstream = await startEventsServer('memory');
}, 60_000);

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await upstream?.close();
});

describe('proxy in front of an upstream with Events', () => {
  let proxy: ProxyProcess;
  beforeAll(async () => {
    proxy = await startProxyProcess(['--store', 'memory', '--config', config, '--upstream', upstream.http.url]);
    closers.push(() => proxy.stop());
  }, 60_000);

  it("lists the upstream's task-scoped types besides its own, once each", async () => {
    const alice = await caller(proxy.url, 'alice');
    const names: string[] = [];
    const descriptors = [];
    for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
      const page = await alice.events().list(cursor);
      descriptors.push(...page.events);
      cursor = page.nextCursor;
    }
    names.push(...descriptors.map((descriptor) => descriptor.name));
    expect(names).toEqual(
      expect.arrayContaining([STAGE, NOTE, 'io.github.mcp-tasks.task_status', 'io.github.mcp-tasks.progress']),
    );
    expect(new Set(names).size).toBe(names.length);
    const stage = descriptors.find((descriptor) => descriptor.name === STAGE);
    expect(stage?.inputSchema).toMatchObject({ required: ['taskId'] });
    expect(stage?._meta?.['io.github.mcp-tasks/tools']).toEqual(['staged', 'staged_workflow']);
  });

  it("names the event source on the proxy's task and delivers the upstream's events in order, push and poll", async () => {
    const alice = await caller(proxy.url, 'alice');
    for (const mode of ['push', 'poll'] as const) {
      const handle = await alice.callTool('staged', { stages: 6, stageMs: 20 }, { mode: 'task' });
      expect(handle.eventSource, mode).toMatchObject({ name: STAGE, input: { taskId: handle.taskId } });
      const events = await collect(handle.events({ mode }));
      expect(textOf(await handle.result()), mode).toBe('6 stages');
      // spec TS7: each delivered occurrence carries data per the payloadSchema, in the upstream's order, each once.
      expect(
        events.map((event) => event.data),
        mode,
      ).toEqual([0, 1, 2, 3, 4, 5].map((index) => ({ index, of: 6 })));
      expect(events.every((event) => event.name === STAGE && event.eventId.startsWith(`${handle.taskId}:`))).toBe(true);
    }
  });

  it('a journaled workflow upstream (step.emit) passes its events through too', async () => {
    const alice = await caller(proxy.url, 'alice');
    const handle = await alice.callTool('staged_workflow', { stages: 3 }, { mode: 'task' });
    const events = await collect(handle.events());
    expect(textOf(await handle.result())).toBe('workflow done');
    expect(events.map((event) => event.data['index'])).toEqual([0, 1, 2]);
  });

  it('gives another caller what a missing task gets, on poll and push (spec TS11)', async () => {
    const alice = await caller(proxy.url, 'alice');
    const handle = await alice.callTool('staged', { stages: 2, stageMs: 10, gate: 'owner-check' }, { mode: 'task' });
    await until(() => gates.has('owner-check') || undefined, 15_000, 'the upstream task to wait at its gate');
    const taskId = handle.taskId as string;
    const bob = { authorization: `Bearer ${await issuer.token('bob')}` };
    const peer = eventsPeer(proxy.url, bob);
    const asked = async (id: string) =>
      (await peer.request('events/poll', { name: STAGE, arguments: { taskId: id }, cursor: null })).error;
    const foreign = await asked(taskId);
    const missing = await asked('no-such-task');
    expect(foreign?.code).toBeDefined();
    expect({ ...foreign, message: foreign?.message.replace(taskId, 'ID') }).toEqual({
      ...missing,
      message: missing?.message.replace('no-such-task', 'ID'),
      ...(missing?.data !== undefined && {
        data: JSON.parse(JSON.stringify(missing.data).replaceAll('no-such-task', taskId)),
      }),
    });
    const pushed = async (id: string) => {
      const stream = await openStream(
        proxy.url,
        { name: STAGE, arguments: { taskId: id }, cursor: null },
        {
          headers: bob,
        },
      );
      await stream.done;
      return stream.messages.find((message) => message.error)?.error as { code: number } | undefined;
    };
    const refusedPush = await pushed(taskId);
    expect(refusedPush?.code).toBeDefined();
    expect(refusedPush?.code).toBe((await pushed('no-such-task'))?.code);
    // The owner reads its events meanwhile.
    const polled = await alice.events().poll(STAGE, { taskId }, { cursor: handle.eventSource?.initialCursor ?? null });
    expect(polled.events.map((event) => event.data['index'])).toEqual([0, 1]);
    gates.get('owner-check')?.();
    expect(textOf(await handle.result())).toBe('2 stages');
  });
});

describe('proxy in front of an upstream whose event types list no tools', () => {
  it("names the event source on a tool's tasks once an upstream task of that tool named it", async () => {
    // The upstream names STAGE on its tasks of `staged` through a predicate: its descriptor carries no tools hint.
    const types = (EVENT_TYPES ?? []).map((type) =>
      type.name === STAGE ? { ...type, tools: (tool: string) => tool === 'staged' } : type,
    );
    const unhinted = await startEventsServer('memory', { types });
    const proxy = await startProxyProcess(['--store', 'memory', '--config', config, '--upstream', unhinted.http.url]);
    closers.push(async () => {
      await proxy.stop();
      await unhinted.close();
    });
    const alice = await caller(proxy.url, 'alice');
    const listed = (await alice.events().list()).events.find((descriptor) => descriptor.name === STAGE);
    expect(listed).toBeDefined();
    expect(listed?._meta?.['io.github.mcp-tasks/tools']).toBeUndefined();
    // The first task of the tool: the proxy does not know its source yet.
    const first = await alice.callTool('staged', { stages: 2, stageMs: 5 }, { mode: 'task' });
    expect(first.eventSource).toBeUndefined();
    expect(textOf(await first.result())).toBe('2 stages');
    // Learned from the upstream's own task: the next task names it (spec TS6), and follows it.
    const second = await alice.callTool('staged', { stages: 3, stageMs: 5 }, { mode: 'task' });
    expect(second.eventSource).toMatchObject({ name: STAGE, input: { taskId: second.taskId } });
    const events = await collect(second.events());
    expect(events.map((event) => event.data)).toEqual([0, 1, 2].map((index) => ({ index, of: 3 })));
    // A tool the upstream names no source for gets none.
    const other = await alice.callTool('staged_workflow', { stages: 1 }, { mode: 'task' });
    expect(textOf(await other.result())).toBe('workflow done');
    const again = await alice.callTool('staged_workflow', { stages: 1 }, { mode: 'task' });
    expect(again.eventSource).toBeUndefined();
  }, 60_000);
});

describe("webhooks of the proxy's task", () => {
  it("deliver the upstream's events signed by the proxy; another caller gets what a missing task gets", async () => {
    const receiver = await webhookReceiver();
    const store = new MemoryStore();
    const webhooks = new OutboxWebhookDeliveries({
      store: store.webhooks,
      policy: new CallbackPolicy({ allowOrigins: [receiver.origin] }),
    });
    const proxy = await startProxy({
      upstream: { url: upstream.http.url },
      serve: { kind: 'http', port: 0 },
      store,
      config: { auth: { jwt: issuer.config } },
      events: { webhooks },
    });
    webhooks.start();
    closers.push(async () => {
      await proxy.close();
      await webhooks.stop();
      await receiver.close();
    });
    const alice = await caller(proxy.url as string, 'alice');
    const handle = await alice.callTool('staged', { stages: 3, stageMs: 10, gate: 'webhook' }, { mode: 'task' });
    const taskId = handle.taskId as string;
    const secret = generateWebhookSecret();
    await alice.events().subscribe(
      STAGE,
      { taskId },
      {
        url: receiver.url,
        secret,
        cursor: handle.eventSource?.initialCursor ?? null,
      },
    );
    // spec TS11: the same refusal for another caller's task as for a missing one.
    const bob = await caller(proxy.url as string, 'bob');
    const refusal = (id: string) =>
      bob
        .events()
        .subscribe(STAGE, { taskId: id }, { url: receiver.url, secret: generateWebhookSecret() })
        .then(
          () => undefined,
          (error: unknown) => (error instanceof TaskRpcError ? error.error : { code: 0, message: String(error) }),
        );
    const foreign = await refusal(taskId);
    const missing = await refusal('no-such-task');
    expect(foreign?.code).toBeDefined();
    expect(foreign?.code).toBe(missing?.code);
    expect(foreign?.message.replace(taskId, 'ID')).toBe(missing?.message.replace('no-such-task', 'ID'));
    gates.get('webhook')?.();
    expect(textOf(await handle.result())).toBe('3 stages');
    // Subscribed while the stages were being emitted: the replay and the live publishing queue each one once.
    const arrived = await receiver.waitFor(4, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const entry of receiver.deliveries())
      expect(() => verifyWebhook(entry.headers, entry.body, secret)).not.toThrow();
    expect(
      inLogOrder(receiver.deliveries()).map(
        (entry) => entry.json['type'] ?? (entry.json['data'] as { index: number }).index,
      ),
    ).toEqual([0, 1, 2, 'terminated']);
    expect(arrived[3]?.json['error']).toMatchObject({ data: { reason: 'task_terminal', taskId } });
  }, 60_000);
});

describe('mcp-tasks proxy --webhook-allow-origin', () => {
  it("delivers the upstream's events by webhook from the proxy's own store, signed, then terminated", async () => {
    const receiver = await webhookReceiver();
    const db = join(dir, 'webhooks.db');
    const args = ['--store', db, '--config', config, '--upstream', upstream.http.url];
    const proxy = await startProxyProcess([...args, '--webhook-allow-origin', receiver.origin]);
    closers.push(async () => {
      await proxy.stop();
      await receiver.close();
    });
    const alice = await caller(proxy.url, 'alice');
    const handle = await alice.callTool('staged', { stages: 2, stageMs: 10, gate: 'cli-webhook' }, { mode: 'task' });
    const taskId = handle.taskId as string;
    const cursor = handle.eventSource?.initialCursor ?? null;
    // Both stages are in the proxy's log (the task waits at its gate): the subscribe's replay delivers them.
    await eventually(async () => (await alice.events().poll(STAGE, { taskId }, { cursor })).events.length === 2);
    const secret = generateWebhookSecret();
    await alice.events().subscribe(STAGE, { taskId }, { url: receiver.url, secret, cursor });
    gates.get('cli-webhook')();
    expect(textOf(await handle.result())).toBe('2 stages');
    const arrived = inLogOrder(await receiver.waitFor(3, 15_000));
    for (const entry of arrived) expect(() => verifyWebhook(entry.headers, entry.body, secret)).not.toThrow();
    expect(arrived.map((entry) => entry.json['type'] ?? (entry.json['data'] as { index: number }).index)).toEqual([
      0,
      1,
      'terminated',
    ]);
    // Without the flag the proxy offers no webhook delivery (spec V12: -32014).
    const plain = await startProxyProcess(args.map((arg) => (arg === db ? join(dir, 'plain.db') : arg)));
    closers.push(() => plain.stop());
    const bob = await caller(plain.url, 'bob');
    const other = await bob.callTool('staged', { stages: 0, stageMs: 0 }, { mode: 'task' });
    const refused = await bob
      .events()
      .subscribe(STAGE, { taskId: other.taskId as string }, { url: receiver.url, secret })
      .then(
        () => undefined,
        (error: unknown) => (error instanceof TaskRpcError ? error.error.code : String(error)),
      );
    expect(refused).toBe(-32014);
  }, 60_000);
});

describe('proxy killed (-9) mid-task, restarted on its store', () => {
  it('follows the upstream task again without re-emitting the events already in its log', async () => {
    const db = join(dir, 'proxy.db');
    const args = ['--store', db, '--config', config, '--upstream', upstream.http.url];
    let proxy = await startProxyProcess(args);
    let alice = await caller(proxy.url, 'alice');
    const handle = await alice.callTool('staged', { stages: 3, stageMs: 10, gate: 'restart' }, { mode: 'task' });
    const taskId = handle.taskId as string;
    const source = handle.eventSource;
    expect(source).toBeDefined();
    const logged = async () =>
      (await alice.events().poll(STAGE, { taskId }, { cursor: source?.initialCursor ?? null })).events;
    for (let tries = 0; (await logged()).length < 3 && tries < 300; tries++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await logged()).toHaveLength(3);
    await proxy.kill();

    proxy = await startProxyProcess(args);
    closers.push(() => proxy.stop());
    alice = await caller(proxy.url, 'alice');
    const resumed = await alice.attach(taskId);
    // The resumed work follows the upstream task again from its initialCursor: the 3 events come again, and the
    // upstream's eventIds keep them out of the log a second time (released now or before the work resumed, alike).
    gates.get('restart')?.();
    expect(textOf(await resumed.result())).toBe('3 stages');
    const all = await collect(alice.followEvents(source!, { mode: 'poll' }));
    expect(all.map((event) => event.data['index'])).toEqual([0, 1, 2]);
  }, 60_000);
});

describe('proxy in front of an upstream without Events', () => {
  it('declares no Events, names no event source, and answers events/* with -32601', async () => {
    const plain = await createMcpTasks({
      server: createEventsServer,
      tools: { staged: { taskSupport: 'optional' } },
      store: 'memory',
    });
    const http = await serveHttp(plain, { port: 0 });
    closers.push(async () => {
      await http.close();
      await plain.close();
    });
    const proxy = await startProxyProcess(['--store', 'memory', '--upstream', http.url]);
    closers.push(() => proxy.stop());
    const client = await TaskClient.connect({ url: proxy.url });
    closers.push(() => client.close());
    expect(client.dialect).toBe('ext-2026');
    const handle = await client.callTool('staged', { stages: 2, stageMs: 10 }, { mode: 'task' });
    expect(handle.isTask).toBe(true);
    expect(handle.eventSource).toBeUndefined();
    expect(textOf(await handle.result())).toBe('2 stages');
    expect(() => client.events()).toThrow(TaskNotSupportedError);
    const viaProxy = eventsPeer(proxy.url);
    for (const method of ['events/list', 'events/poll', 'events/stream', 'events/subscribe', 'events/unsubscribe']) {
      const params = method === 'events/list' ? {} : { name: STAGE, arguments: { taskId: 'x' } };
      expect((await viaProxy.request(method, params)).error?.code, method).toBe(-32601);
    }
  }, 60_000);
});
