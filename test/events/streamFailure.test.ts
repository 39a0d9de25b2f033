import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';

import { requireService } from '../helpers/services.js';
import { tempDir } from '../helpers/tmp.js';
import { gates, STAGE, startEventsServer, type EventsServer } from './eventsServer.js';
import { eventsPeer, method, openStream, type OpenStream } from './eventsPeer.js';

/** Opens a gated `staged` task of one stage and an events/stream from its start, once its event is delivered. */
async function streamOfGatedTask(server: EventsServer, gate: string): Promise<{ taskId: string; stream: OpenStream }> {
  const created = await eventsPeer(server.http.url).request('tools/call', {
    name: 'staged',
    arguments: { stages: 1, stageMs: 0, gate },
  });
  expect(created.error, JSON.stringify(created.error)).toBeUndefined();
  const source = created.result?.['eventSource'] as Record<string, unknown>;
  const stream = await openStream(
    server.http.url,
    { name: STAGE, arguments: source['input'], cursor: source['initialCursor'] },
    { id: gate },
  );
  await stream.next(method('notifications/events/event'), 5000);
  return { taskId: created.result?.['taskId'] as string, stream };
}

describe('a store failure in the middle of an events/stream (SQLite)', () => {
  let server: EventsServer | undefined;
  afterAll(async () => {
    gates.get('v48-sqlite')?.();
    await server?.close().catch(() => {});
  });

  it('V48: a closed store is a recoverable notifications/events/error; the stream stays open with its heartbeats', async () => {
    server = await startEventsServer(join(tempDir(), 'events.db'), { heartbeatMs: 200 });
    const { stream } = await streamOfGatedTask(server, 'v48-sqlite');
    // The store's database closes under the stream: every read fails from now on.
    await server.tasks.engine.store.close();
    const error = await stream.next(method('notifications/events/error'), 10_000);
    expect(error.params?.['error']).toMatchObject({ code: -32603, data: { reason: 'store_unavailable' } });
    expect((error.params?.['_meta'] as Record<string, unknown>)['io.modelcontextprotocol/subscriptionId']).toBe(
      'v48-sqlite',
    );
    // Open still: heartbeats follow the error, and it is said once per spell of failures, not on every retry.
    const index = stream.messages.indexOf(error);
    await stream.next((m) => method('notifications/events/heartbeat')(m) && stream.messages.indexOf(m) > index, 5000);
    await stream.next(
      (m) => method('notifications/events/heartbeat')(m) && stream.messages.indexOf(m) > index + 1,
      5000,
    );
    expect(stream.messages.filter(method('notifications/events/error'))).toHaveLength(1);
    expect(stream.messages.some(method('notifications/events/terminated'))).toBe(false);
    expect(stream.messages.some((m) => m.id !== undefined)).toBe(false);
    stream.close();
    await stream.done.catch(() => {});
  });
});

const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');
if (redisUrl) {
  describe('a store failure in the middle of an events/stream (Redis)', () => {
    // A Redis user of this test alone, whose commands are revoked and granted back while a stream reads through it.
    const user = `mcp-tasks-v48-${randomUUID()}`;
    const password = randomUUID();
    const admin = new Redis(redisUrl);
    let server: EventsServer | undefined;
    afterAll(async () => {
      await admin.call('ACL', 'SETUSER', user, '+@all');
      gates.get('v48-redis')?.();
      await server?.close().catch(() => {});
      await admin.call('ACL', 'DELUSER', user);
      admin.disconnect();
    });

    it('V48: reads refused by Redis send notifications/events/error; once they succeed the stream delivers again', async () => {
      await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
      const url = new URL(redisUrl);
      url.username = user;
      url.password = password;
      server = await startEventsServer(url.toString(), { heartbeatMs: 200 });
      const { taskId, stream } = await streamOfGatedTask(server, 'v48-redis');
      // Every command of this user but pub/sub is refused (NOPERM): the stream's reads fail, its wakes still come.
      await admin.call('ACL', 'SETUSER', user, '-@all', '+subscribe', '+psubscribe', '+ping');
      await admin.publish(`mcp-tasks-events:${taskId}`, 'x');
      const error = await stream.next(method('notifications/events/error'), 10_000);
      expect(error.params?.['error']).toMatchObject({ code: -32603, data: { reason: 'store_unavailable' } });
      await admin.call('ACL', 'SETUSER', user, '+@all');
      // Recovered: an event appended now is delivered on the same stream, after the error.
      await server.tasks.engine.emitEvent(taskId, { type: STAGE, data: { index: 1 } });
      const event = await stream.next(
        (m) => method('notifications/events/event')(m) && (m.params?.['data'] as { index: number }).index === 1,
        10_000,
      );
      expect(stream.messages.indexOf(event)).toBeGreaterThan(stream.messages.indexOf(error));
      gates.get('v48-redis')?.();
      await stream.done;
      expect(stream.messages.find(method('notifications/events/terminated'))?.params?.['error']).toMatchObject({
        data: { reason: 'task_terminal', status: 'completed' },
      });
    });
  });
}
