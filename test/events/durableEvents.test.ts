import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { EventsOptions } from '../../src/events/index.js';
import { runWorker, type WorkerHandle } from '../../src/server/worker/index.js';
import { isolatedQueue } from '../distributed/backends.js';
import { requireService } from '../helpers/services.js';
import type { ModernPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { authenticate, createEventsServer, startEventsServer, type EventsServer } from './eventsServer.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

/**
 * Untasked types with `retain.durable`: their events live in the task store, so instances that share it (each with
 * its own connections: the store is the only way between them) serve one numbering, a cursor outlives a restart,
 * and a queue worker can emit them.
 */
const payload = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');
const STORES: Array<[string, string | undefined]> = [
  ['SQLite', join(tempDir(), 'durable-events.db')],
  ['Redis', redisUrl],
  ['PostgreSQL', requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL')],
];

type Answer = Awaited<ReturnType<ModernPeer['request']>>;
const occurrences = (answer: Answer) => answer.result?.['events'] as Array<Record<string, unknown>>;
const data = (answer: Answer) => occurrences(answer).map((event) => event['data']);

/** Fresh type names per run: the shared servers' logs outlive a run (that is the point). */
function typesOf(): { durable: string; kept3: string; local: string; types: NonNullable<EventsOptions['types']> } {
  const suffix = randomBytes(4).toString('hex');
  const durable = `com.example.durable_${suffix}`;
  const kept3 = `com.example.kept3_${suffix}`;
  const local = `com.example.local_${suffix}`;
  return {
    durable,
    kept3,
    local,
    types: [
      { name: durable, description: 'Durable', payloadSchema: payload, taskScoped: false, retain: { durable: true } },
      {
        name: kept3,
        description: 'Durable, 3 kept',
        payloadSchema: payload,
        taskScoped: false,
        retain: { durable: true, events: 3 },
      },
      { name: local, description: 'Per process', payloadSchema: payload, taskScoped: false },
    ],
  };
}

for (const [name, store] of STORES) {
  if (!store) continue;
  describe(`durable untasked events over ${name}`, () => {
    const { durable, kept3, types } = typesOf();
    let a: EventsServer;
    let b: EventsServer;
    const poll = (server: EventsServer, who: string, params: Record<string, unknown>) =>
      eventsPeer(server.http.url, { authorization: `Bearer ${who}` }).request('events/poll', params);

    beforeAll(async () => {
      a = await startEventsServer(store, { types }, { authenticate });
      b = await startEventsServer(store, { types }, { authenticate });
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
    });

    it('V23 V41: emitted on one instance, polled on the other with the same ids, in order', async () => {
      const start = await poll(b, 'alice', { name: durable, cursor: null });
      expect(start.result).toMatchObject({ events: [], truncated: false });
      const ids = [await a.tasks.emitEvent(durable, { n: 1 }), await a.tasks.emitEvent(durable, { n: 2 })];
      const read = await poll(b, 'alice', { name: durable, cursor: start.result?.['cursor'] });
      expect(data(read)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(occurrences(read).map((event) => event['eventId'])).toEqual(ids);
      // Both instances number one log: the other instance's emit comes next.
      await b.tasks.emitEvent(durable, { n: 3 });
      const onA = await poll(a, 'alice', { name: durable, cursor: read.result?.['cursor'] });
      expect(data(onA)).toEqual([{ n: 3 }]);
    });

    it('V47: a push stream on one instance hears an emit on the other, live', async () => {
      const stream = await openStream(b.http.url, { name: durable }, { headers: { authorization: 'Bearer alice' } });
      await stream.next(method('notifications/events/active'));
      const started = Date.now();
      const eventId = await a.tasks.emitEvent(durable, { n: 40 });
      const event = await stream.next(method('notifications/events/event'), 5000);
      expect(event.params).toMatchObject({ eventId, data: { n: 40 } });
      // Woken by the store's bus (or, for SQLite's second connection, its one-second re-read), not a long poll.
      expect(Date.now() - started).toBeLessThan(2500);
      stream.close();
    });

    it('an event addressed to a principal reaches it on every instance, and no one else', async () => {
      const cursor = (await poll(b, 'alice', { name: durable, cursor: null })).result?.['cursor'];
      await a.tasks.emitEvent(durable, { n: 5 }, { to: 'alice' });
      expect(data(await poll(b, 'alice', { name: durable, cursor }))).toEqual([{ n: 5 }]);
      expect(data(await poll(b, 'bob', { name: durable, cursor }))).toEqual([]);
    });

    it('V32 V33: past the type’s bound the oldest are dropped in the store; an older cursor is truncated', async () => {
      const cursor = (await poll(a, 'alice', { name: kept3, cursor: null })).result?.['cursor'];
      for (let n = 1; n <= 5; n++) await a.tasks.emitEvent(kept3, { n });
      const read = await poll(b, 'alice', { name: kept3, cursor });
      expect(read.result?.['truncated']).toBe(true);
      expect(data(read)).toEqual([{ n: 3 }, { n: 4 }, { n: 5 }]);
    });

    it('§12: a cursor stays valid across a restart of the instance that gave it', async () => {
      const cursor = (await poll(a, 'alice', { name: durable, cursor: null })).result?.['cursor'];
      await a.tasks.emitEvent(durable, { n: 60 });
      await a.close();
      a = await startEventsServer(store, { types }, { authenticate });
      await b.tasks.emitEvent(durable, { n: 61 });
      const read = await poll(a, 'alice', { name: durable, cursor });
      expect(read.result?.['truncated']).toBe(false);
      expect(data(read)).toEqual([{ n: 60 }, { n: 61 }]);
    });
  });
}

if (redisUrl) {
  const url = redisUrl;
  describe('a queue worker emits durable untasked events (Redis)', () => {
    const { durable, local, types } = typesOf();
    const queue = isolatedQueue(url);
    let server: EventsServer;
    let worker: WorkerHandle;

    beforeAll(async () => {
      server = await startEventsServer(url, { types }, { authenticate });
      worker = await runWorker({
        server: createEventsServer,
        store: url,
        redisUrl: url,
        queueName: queue.name,
        events: { types },
      });
    });
    afterAll(async () => {
      await worker?.close({ timeoutMs: 0 });
      await server?.close();
      await queue.dispose();
    });

    it('a server instance serves what the worker emitted; a type kept per process is refused in a worker', async () => {
      const cursor = (await poll(server, { name: durable, cursor: null })).result?.['cursor'];
      const eventId = await worker.emitEvent(durable, { n: 9 });
      const read = await poll(server, { name: durable, cursor });
      expect(occurrences(read)).toMatchObject([{ eventId, data: { n: 9 } }]);
      await expect(worker.emitEvent(local, { n: 1 })).rejects.toThrow(/kept per process/);
      // Checked like the server's emits: data outside the payload schema is refused.
      await expect(worker.emitEvent(durable, { n: 'nine' })).rejects.toThrow();
    });

    function poll(instance: EventsServer, params: Record<string, unknown>) {
      return eventsPeer(instance.http.url, { authorization: 'Bearer alice' }).request('events/poll', params);
    }
  });
}
