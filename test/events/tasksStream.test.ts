import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, HttpPeer, type Message, type ModernPeer } from '../helpers/rawWire.js';
import { gates, STAGE, startEventsServer, type EventsServer } from './eventsServer.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

const EVENT = 'notifications/tasks/event';
const STATUS = 'io.github.mcp-tasks.task_status';

function authenticate(request: Request) {
  const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
  return token === 'alice' || token === 'bob' ? { token, clientId: token, scopes: [] } : undefined;
}
const as = (who: string) => ({ authorization: `Bearer ${who}` });

describe('SEP-2694 tasks/stream from the task event log', () => {
  let server: EventsServer;
  let alice: ModernPeer;
  let bob: ModernPeer;

  beforeAll(async () => {
    server = await startEventsServer('memory', { taskStreams: true }, { authenticate });
    alice = eventsPeer(server.http.url, as('alice'));
    bob = eventsPeer(server.http.url, as('bob'));
  });
  afterAll(async () => server.close());

  async function staged(stages: number, gate?: string): Promise<string> {
    const created = await alice.request('tools/call', {
      name: 'staged',
      arguments: { stages, stageMs: 5, ...(gate && { gate }) },
    });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    return created.result?.['taskId'] as string;
  }

  const stream = (params: Record<string, unknown>, who = 'alice') =>
    openStream(server.http.url, params, { headers: as(who), method: 'tasks/stream' });
  const eventsOf = (messages: Message[]) =>
    messages.filter(method(EVENT)).map((message) => message.params as Record<string, unknown>);

  it('TE2 TE4 TE5 TE11: every entry from seq 0 in order with its related task, live ones too, then the empty result', async () => {
    const taskId = await staged(2, 'te-live');
    const open = await stream({ taskId });
    expect(open.contentType).toContain('text/event-stream');
    await open.next((m) => method(EVENT)(m) && (m.params?.['payload'] as { index?: number }).index === 1);
    gates.get('te-live')?.();
    await open.done;
    const events = eventsOf(open.messages);
    expect(events.map((event) => event['seq'])).toEqual(events.map((_, index) => index));
    for (const event of events) {
      expect(event['taskId']).toBe(taskId);
      expect(event['_meta']).toEqual({ 'io.modelcontextprotocol/related-task': { taskId } });
      expect(event['payload']).toBeTypeOf('object');
    }
    expect(events.filter((event) => event['type'] === STAGE).map((event) => event['payload'])).toEqual([
      { index: 0, of: 2 },
      { index: 1, of: 2 },
    ]);
    // spec TE18: the status entries agree with tasks/get: the last one is the task's terminal status.
    expect(events.at(-1)).toMatchObject({ type: STATUS, payload: { status: 'completed' } });
    // spec TE19: nothing but task events on the stream, and the request answered with the empty result.
    expect(open.messages.filter((m) => m.method && m.method !== EVENT)).toEqual([]);
    expect(open.messages.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
  });

  it('TE10 TE14: a resume with after delivers only later entries; on an ended task it answers at once', async () => {
    const taskId = await staged(3);
    const first = await stream({ taskId });
    await first.done;
    const all = eventsOf(first.messages);
    expect(all.length).toBeGreaterThanOrEqual(4);
    const resumed = await stream({ taskId, after: 1 });
    await resumed.done;
    expect(eventsOf(resumed.messages)).toEqual(all.slice(2));
    const last = all.length - 1;
    const atEnd = await stream({ taskId, after: last });
    await atEnd.done;
    expect(eventsOf(atEnd.messages)).toEqual([]);
    expect(atEnd.messages.at(-1)).toMatchObject({ result: { resultType: 'complete' } });
  });

  it('TE9: after must be a non-negative integer within the log: -32602, before any stream', async () => {
    const taskId = await staged(0);
    for (const after of [-1, 1.5, 'x', 10_000]) {
      const refused = await alice.request('tasks/stream', { taskId, after });
      expect(refused.error?.code, JSON.stringify(after)).toBe(-32602);
    }
    expect((await alice.request('tasks/stream', {})).error?.code).toBe(-32602);
  });

  it('TE15: another caller’s task streams exactly as a missing one does, and as tasks/get answers it', async () => {
    const taskId = await staged(1, 'te-owner');
    const foreign = await bob.request('tasks/stream', { taskId });
    const missing = await bob.request('tasks/stream', { taskId: 'no-such-task' });
    const get = await bob.request('tasks/get', { taskId });
    expect(foreign.error).toBeDefined();
    expect(foreign.error).toEqual(get.error);
    expect(JSON.stringify(foreign.error).replaceAll(taskId, 'ID')).toBe(
      JSON.stringify(missing.error).replaceAll('no-such-task', 'ID'),
    );
    gates.get('te-owner')?.();
  });

  it('TE7: closing the stream stops delivery, not the task', async () => {
    const taskId = await staged(1, 'te-cancel');
    const open = await stream({ taskId });
    await open.next(method(EVENT));
    open.close();
    await open.done;
    const got = await alice.request('tasks/get', { taskId });
    expect(got.result?.['status']).toBe('working');
    gates.get('te-cancel')?.();
    await expect
      .poll(async () => (await alice.request('tasks/get', { taskId })).result?.['status'], { timeout: 5000 })
      .toBe('completed');
  });

  it('TE6: a second tasks/stream of one task on one connection is -32602; another connection streams it alongside', async () => {
    const session = new HttpPeer(server.http.url, as('alice'));
    const other = new HttpPeer(server.http.url, as('alice'));
    try {
      for (const peer of [session, other]) await peer.initialize();
      const created = await session.request('tools/call', {
        name: 'staged',
        arguments: { stages: 1, stageMs: 1, gate: 'te6' },
        task: {},
      });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      const streamed = (peer: HttpPeer) =>
        peer.notifications.some((m) => m.method === EVENT && m.params?.['taskId'] === taskId);
      const first = session.request('tasks/stream', { taskId });
      await eventually(() => streamed(session));
      const second = await session.request('tasks/stream', { taskId });
      expect(second.error).toMatchObject({ code: -32602 });
      // One stream per task per connection: the session next door may hold its own.
      const alongside = other.request('tasks/stream', { taskId });
      await eventually(() => streamed(other));
      gates.get('te6')();
      expect((await first).result).toBeDefined();
      expect((await alongside).result).toBeDefined();
      // Once the first stream ended, the connection may stream the task again (its log, to the end).
      expect((await session.request('tasks/stream', { taskId })).error).toBeUndefined();
    } finally {
      await session.close();
      await other.close();
    }
  });
});

describe('tasks/stream without the taskStreams option', () => {
  it('TE1: answers -32601', async () => {
    const server = await startEventsServer('memory', {}, { authenticate });
    try {
      const peer = eventsPeer(server.http.url, as('alice'));
      expect((await peer.request('tasks/stream', { taskId: 'any' })).error?.code).toBe(-32601);
    } finally {
      await server.close();
    }
  });
});
