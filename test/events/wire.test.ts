import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp } from '../../src/server/index.js';
import { eventually, type ModernPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { createEventsServer, gates, NOTE, STAGE, startEventsServer, type EventsServer } from './eventsServer.js';
import { EVENTS, eventsPeer, method, openStream } from './eventsPeer.js';

const STATUS = 'io.github.mcp-tasks.task_status';

/** Bearer tokens of two principals. */
function authenticate(request: Request) {
  const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
  return token === 'alice' || token === 'bob' ? { token, clientId: token, scopes: [] } : undefined;
}
const as = (who: string) => ({ authorization: `Bearer ${who}` });

for (const [storeName, spec] of [
  ['memory', () => 'memory'],
  ['SQLite', () => join(tempDir(), 'events.db')],
] as const) {
  describe(`the Events extension on the 2026-07-28 wire (${storeName})`, () => {
    let server: EventsServer;
    let alice: ModernPeer;
    let bob: ModernPeer;

    beforeAll(async () => {
      server = await startEventsServer(spec(), { heartbeatMs: 300, maxStreamsPerOwner: 4 }, { authenticate });
      alice = eventsPeer(server.http.url, as('alice'));
      bob = eventsPeer(server.http.url, as('bob'));
    });
    afterAll(async () => server.close());

    async function staged(stages: number, stageMs = 10, gate?: string): Promise<Record<string, unknown>> {
      const created = await alice.request('tools/call', {
        name: 'staged',
        arguments: { stages, stageMs, ...(gate && { gate }) },
      });
      expect(created.error, JSON.stringify(created.error)).toBeUndefined();
      return created.result as Record<string, unknown>;
    }

    const poll = (peer: ModernPeer, params: Record<string, unknown>) => peer.request('events/poll', params);

    it('V2 V3: declares the extension as an object under capabilities.extensions', async () => {
      const discover = await alice.request('server/discover');
      const extensions = (discover.result?.['capabilities'] as Record<string, Record<string, unknown>>)['extensions'];
      expect(extensions?.[EVENTS]).toEqual({ listChanged: false });
    });

    it('V1 V10 V11 V13: lists every type sorted by name, with its schemas and modes; a foreign cursor is -32602', async () => {
      const listed = await alice.request('events/list');
      expect(listed.result?.['resultType']).toBe('complete');
      const events = listed.result?.['events'] as Array<Record<string, unknown>>;
      expect(events.map((event) => event['name'])).toEqual([NOTE, STAGE, 'io.github.mcp-tasks.progress', STATUS]);
      for (const event of events) {
        expect(event['delivery']).toEqual(['poll', 'push']);
        expect(event['inputSchema']).toMatchObject({ required: ['taskId'] });
        expect(typeof event['description']).toBe('string');
        expect(event['payloadSchema']).toMatchObject({ type: 'object' });
      }
      expect(listed.result?.['nextCursor']).toBeUndefined();
      expect((await alice.request('events/list', { cursor: 'nope' })).error?.code).toBe(-32602);
    });

    it('V40 V44: an unknown type is -32011, bad arguments -32602, before any stream opens', async () => {
      const created = await staged(0);
      const unknown = await poll(alice, { name: 'com.example.nothing', arguments: { taskId: created['taskId'] } });
      expect(unknown.error).toMatchObject({ code: -32011, data: { kind: 'event' } });
      expect((await poll(alice, { name: STAGE, arguments: {} })).error?.code).toBe(-32602);
      expect((await poll(alice, { name: STAGE, arguments: { taskId: 1 } })).error?.code).toBe(-32602);
      expect((await poll(alice, { name: STAGE, maxEvents: -1, arguments: { taskId: 'x' } })).error?.code).toBe(-32602);
      const stream = await openStream(
        server.http.url,
        { name: 'com.example.nothing', arguments: { taskId: 'x' } },
        { headers: as('alice') },
      );
      expect(stream.contentType).not.toContain('text/event-stream');
      await stream.done;
      expect(stream.messages[0]?.['error']).toMatchObject({ code: -32011 });
    });

    it('V12: webhook delivery is not offered without a webhook configuration: -32014 naming the mode', async () => {
      const created = await staged(0);
      const params = {
        name: STAGE,
        arguments: { taskId: created['taskId'] },
        delivery: {
          mode: 'webhook',
          url: 'https://example.com/hook',
          secret: `whsec_${Buffer.alloc(32).toString('base64')}`,
        },
      };
      for (const method of ['events/subscribe', 'events/unsubscribe']) {
        const refused = await alice.request(method, params);
        expect(refused.error, method).toMatchObject({
          code: -32014,
          data: { feature: 'deliveryMode', value: 'webhook' },
        });
      }
    });

    it('TS11: another caller’s task reads exactly as a missing one, in poll and push', async () => {
      const created = await staged(1);
      const taskId = created['taskId'] as string;
      const foreign = await poll(bob, { name: STAGE, arguments: { taskId } });
      const missing = await poll(bob, { name: STAGE, arguments: { taskId: '00000000-0000-4000-8000-000000000000' } });
      expect(foreign.error).toBeDefined();
      expect({ ...foreign.error, data: undefined }).toEqual({ ...missing.error, data: undefined });
      const stream = await openStream(server.http.url, { name: STAGE, arguments: { taskId } }, { headers: as('bob') });
      await stream.done;
      expect(stream.messages[0]?.['error']).toMatchObject({
        code: foreign.error?.code,
        message: foreign.error?.message,
      });
      // The owner's view has the event.
      const own = await poll(alice, {
        name: STAGE,
        arguments: { taskId },
        cursor: (created['eventSource'] as Record<string, string>)['initialCursor'],
      });
      await eventually(
        async () =>
          (
            (
              await poll(alice, {
                name: STAGE,
                arguments: { taskId },
                cursor: (created['eventSource'] as Record<string, string>)['initialCursor'],
              })
            ).result?.['events'] as unknown[]
          ).length === 1,
      );
      expect(own.error).toBeUndefined();
    });

    it('TS1 TS2 TS5: the CreateTaskResult names the task’s event source only for a request that declared Events', async () => {
      const created = await staged(0);
      expect(created['eventSource']).toMatchObject({ name: STAGE, input: { taskId: created['taskId'] } });
      expect(typeof (created['eventSource'] as Record<string, unknown>)['initialCursor']).toBe('string');
      const undeclared = eventsPeer(server.http.url, as('alice'));
      undeclared.capabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
      const plain = await undeclared.request('tools/call', { name: 'staged', arguments: { stages: 0, stageMs: 0 } });
      expect(plain.result?.['resultType']).toBe('task');
      expect(plain.result?.['eventSource']).toBeUndefined();
    });

    it('V24 V25 V36 V37 V38: poll from now, then from a cursor in pages of maxEvents, hasMore until the end', async () => {
      const created = await staged(5, 5, `${storeName}-poll`);
      const taskId = created['taskId'] as string;
      const source = created['eventSource'] as Record<string, string>;
      // A null (or absent) cursor starts from now: no history.
      const now = await poll(alice, { name: STAGE, arguments: { taskId }, cursor: null });
      expect(now.result).toMatchObject({
        events: expect.any(Array),
        truncated: false,
        hasMore: false,
        nextPollMs: 100,
        resultType: 'complete',
      });
      await eventually(async () => {
        const all = await poll(alice, { name: STAGE, arguments: { taskId }, cursor: source['initialCursor'] });
        return (all.result?.['events'] as unknown[]).length === 5;
      });
      const first = await poll(alice, {
        name: STAGE,
        arguments: { taskId },
        cursor: source['initialCursor'],
        maxEvents: 2,
      });
      expect((first.result?.['events'] as Array<{ data: unknown }>).map((event) => event.data)).toEqual([
        { index: 0, of: 5 },
        { index: 1, of: 5 },
      ]);
      expect(first.result?.['hasMore']).toBe(true);
      const rest = await poll(alice, {
        name: STAGE,
        arguments: { taskId },
        cursor: first.result?.['cursor'],
        maxEvents: 10,
      });
      const events = rest.result?.['events'] as Array<Record<string, unknown>>;
      expect(events.map((event) => (event['data'] as { index: number }).index)).toEqual([2, 3, 4]);
      expect(events[0]).toMatchObject({ eventId: `${taskId}:2`, name: STAGE });
      expect(Date.parse(events[0]?.['timestamp'] as string)).toBeGreaterThan(0);
      expect(events[0]?.['cursor']).toBeUndefined();
      expect(rest.result?.['hasMore']).toBe(false);
      // V28: a quiet poll still answers a cursor, the same one.
      const quiet = await poll(alice, { name: STAGE, arguments: { taskId }, cursor: rest.result?.['cursor'] });
      expect(quiet.result).toMatchObject({ events: [], cursor: rest.result?.['cursor'], hasMore: false });
      // A cursor of another task, or garbage, is -32602.
      const other = await staged(0);
      expect(
        (await poll(alice, { name: STAGE, arguments: { taskId: other['taskId'] }, cursor: rest.result?.['cursor'] }))
          .error?.code,
      ).toBe(-32602);
      expect((await poll(alice, { name: STAGE, arguments: { taskId }, cursor: 'garbage' })).error?.code).toBe(-32602);
      gates.get(`${storeName}-poll`)?.();
    });

    it('V29 V30: maxAgeMs floors the replay and says truncated', async () => {
      const gate = `${storeName}-age`;
      const created = await staged(2, 5, gate);
      const taskId = created['taskId'] as string;
      const cursor = (created['eventSource'] as Record<string, string>)['initialCursor'];
      await eventually(
        async () =>
          ((await poll(alice, { name: STAGE, arguments: { taskId }, cursor })).result?.['events'] as unknown[])
            .length === 2,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      const floored = await poll(alice, { name: STAGE, arguments: { taskId }, cursor, maxAgeMs: 10 });
      expect(floored.result).toMatchObject({ events: [], truncated: true });
      const whole = await poll(alice, { name: STAGE, arguments: { taskId }, cursor, maxAgeMs: 60_000 });
      expect(whole.result).toMatchObject({ truncated: false });
      expect(whole.result?.['events']).toHaveLength(2);
      gates.get(gate)?.();
    });

    it('§16.4: a poll past the end of a finished task’s events answers the task’s ending', async () => {
      const created = await staged(1, 5);
      const taskId = created['taskId'] as string;
      const cursor = (created['eventSource'] as Record<string, string>)['initialCursor'];
      const last = await eventually(async () => {
        const got = await poll(alice, { name: STAGE, arguments: { taskId }, cursor });
        return (got.result?.['events'] as unknown[] | undefined)?.length === 1 ? got : undefined;
      });
      const ended = await eventually(async () => {
        const next = await poll(alice, { name: STAGE, arguments: { taskId }, cursor: last.result?.['cursor'] });
        return next.error ? next : undefined;
      });
      expect(ended.error).toMatchObject({
        code: -32011,
        message: 'Task ended',
        data: { reason: 'task_terminal', taskId, status: 'completed' },
      });
    });

    it('V43–V49 V53 TS8: push sends active, each event with its cursor and the subscription id, heartbeats, then terminated and the final frame', async () => {
      const gate = `${storeName}-push`;
      const created = await staged(3, 20, gate);
      const taskId = created['taskId'] as string;
      const source = created['eventSource'] as Record<string, unknown>;
      const stream = await openStream(
        server.http.url,
        { name: source['name'], arguments: source['input'], cursor: source['initialCursor'] },
        { headers: as('alice'), id: 77 },
      );
      expect(stream.contentType).toContain('text/event-stream');
      const active = await stream.next(method('notifications/events/active'));
      expect(stream.messages[0]).toBe(active);
      expect(active.params).toMatchObject({ cursor: source['initialCursor'], truncated: false });
      await eventually(() => stream.messages.filter(method('notifications/events/event')).length === 3);
      // spec V51–V54: a heartbeat while the task waits, as a data frame with the cursor.
      const heartbeat = await stream.next(method('notifications/events/heartbeat'), 5000);
      gates.get(gate)?.();
      await stream.done;
      const events = stream.messages.filter(method('notifications/events/event'));
      expect(events.map((event) => (event.params?.['data'] as { index: number }).index)).toEqual([0, 1, 2]);
      for (const message of stream.messages.filter((m) => m.method)) {
        expect(message.method).toMatch(/^notifications\/events\//);
        expect((message.params?.['_meta'] as Record<string, unknown>)['io.modelcontextprotocol/subscriptionId']).toBe(
          77,
        );
      }
      expect(events[2]?.params?.['cursor']).toBeTypeOf('string');
      expect(heartbeat.params?.['cursor']).toBe(events[2]?.params?.['cursor']);
      const terminated = stream.messages.find(method('notifications/events/terminated'));
      expect(terminated?.params?.['error']).toMatchObject({
        code: -32011,
        data: { reason: 'task_terminal', taskId, status: 'completed' },
      });
      const final = stream.messages.at(-1);
      expect(final).toMatchObject({
        id: 77,
        result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 77 } },
      });
      // Resuming from the last event's cursor on a finished task delivers nothing new and ends at once.
      const resumed = await openStream(
        server.http.url,
        { name: STAGE, arguments: { taskId }, cursor: events[2]?.params?.['cursor'] },
        { headers: as('alice') },
      );
      await resumed.done;
      expect(resumed.messages.filter(method('notifications/events/event'))).toEqual([]);
      expect(resumed.messages.some(method('notifications/events/terminated'))).toBe(true);
    });

    it('the task status type delivers each status change, the terminal one last', async () => {
      const created = await staged(0, 0);
      const taskId = created['taskId'] as string;
      const stream = await openStream(
        server.http.url,
        {
          name: STATUS,
          arguments: { taskId },
          cursor: (created['eventSource'] as Record<string, string>)['initialCursor'],
        },
        { headers: as('alice') },
      );
      await stream.done;
      const statuses = stream.messages
        .filter(method('notifications/events/event'))
        .map((event) => (event.params?.['data'] as { status: string }).status);
      expect(statuses.at(-1)).toBe('completed');
    });

    it('V57 TS13: a stream past the per-caller bound is -32013 before opening; an aborted stream frees its place', async () => {
      const gate = `${storeName}-bound`;
      const created = await staged(0, 0, gate);
      const params = { name: STAGE, arguments: { taskId: created['taskId'] } };
      const open = await Promise.all(
        [1, 2, 3, 4].map(() => openStream(server.http.url, params, { headers: as('alice') })),
      );
      await Promise.all(open.map((stream) => stream.next(method('notifications/events/active'))));
      const refused = await openStream(server.http.url, params, { headers: as('alice') });
      await refused.done;
      expect(refused.messages[0]?.['error']).toMatchObject({ code: -32013, data: { limit: 'event_streams', max: 4 } });
      open[0]?.close();
      const again = await eventually(async () => {
        const stream = await openStream(server.http.url, params, { headers: as('alice') });
        if (stream.contentType.includes('text/event-stream')) return stream;
        await stream.done;
        return undefined;
      });
      await again.next(method('notifications/events/active'));
      gates.get(gate)?.();
      await Promise.all([again, ...open.slice(1)].map((stream) => stream.done));
    });

    it('workflow emits are keyed by step name: a run resumed after its sleep emits each stage once', async () => {
      const created = await alice.request('tools/call', { name: 'staged_workflow', arguments: { stages: 3 } });
      const taskId = created.result?.['taskId'] as string;
      const stream = await openStream(
        server.http.url,
        {
          name: STAGE,
          arguments: { taskId },
          cursor: (created.result?.['eventSource'] as Record<string, string>)['initialCursor'],
        },
        { headers: as('alice') },
      );
      await stream.done;
      const indexes = stream.messages
        .filter(method('notifications/events/event'))
        .map((event) => (event.params?.['data'] as { index: number }).index);
      expect(indexes).toEqual([0, 1, 2]);
    });

    it('V21: an emit whose data fails the payloadSchema is refused to the handler and stores nothing', async () => {
      const created = await alice.request('tools/call', { name: 'bad_emit', arguments: {} });
      const taskId = created.result?.['taskId'] as string;
      const done = await eventually(async () => {
        const task = (await alice.request('tasks/get', { taskId })).result;
        return task?.['status'] === 'completed' ? task : undefined;
      });
      expect(JSON.stringify(done['result'])).toContain(
        'refused: Event data of com.example.stage does not match its payloadSchema at index',
      );
    });
  });
}

describe('a server without the events option', () => {
  it('V7: answers events/* with -32601 and declares nothing', async () => {
    const tasks = await createMcpTasks({ server: createEventsServer, tools: { staged: 'optional' }, store: 'memory' });
    const http = await serveHttp(tasks, { port: 0 });
    try {
      const peer = eventsPeer(http.url);
      for (const name of ['events/list', 'events/poll', 'events/stream', 'events/subscribe', 'events/unsubscribe'])
        expect((await peer.request(name, { name: STAGE })).error?.code, name).toBe(-32601);
      const discover = await peer.request('server/discover');
      expect(JSON.stringify(discover.result)).not.toContain(EVENTS);
      const created = await peer.request('tools/call', { name: 'staged', arguments: { stages: 0, stageMs: 0 } });
      expect(created.result?.['eventSource']).toBeUndefined();
    } finally {
      await http.close();
      await tasks.close();
    }
  });
});
