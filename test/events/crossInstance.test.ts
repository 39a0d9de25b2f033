import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { requireService } from '../helpers/services.js';
import { gates, STAGE, startEventsServer, type EventsServer, authenticate } from './eventsServer.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

/**
 * Two runtime instances sharing one store, each with its own store connections (so the only way between them is the
 * store: Redis pub/sub, PostgreSQL LISTEN/NOTIFY): a task runs (and emits) on one, its events are pushed by the other.
 */
const STORES: Array<[string, string | undefined]> = [
  ['Redis', requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL')],
  ['PostgreSQL', requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL')],
];

const as = (who: string) => ({ authorization: `Bearer ${who}` });

for (const [name, url] of STORES) {
  if (!url) continue;
  describe(`push across instances sharing ${name}`, () => {
    let emitting: EventsServer;
    let pushing: EventsServer;
    beforeAll(async () => {
      emitting = await startEventsServer(url, {}, { authenticate });
      pushing = await startEventsServer(url, {}, { authenticate });
    });
    afterAll(async () => {
      await pushing?.close();
      await emitting?.close();
    });

    it('an event emitted in one process reaches a stream served by another, live, then the stream ends with the task', async () => {
      const gate = `cross-${name}`;
      const created = await eventsPeer(emitting.http.url, as('alice')).request('tools/call', {
        name: 'staged',
        arguments: { stages: 0, stageMs: 0, gate },
      });
      const taskId = created.result?.['taskId'] as string;
      const source = created.result?.['eventSource'] as Record<string, unknown>;
      const stream = await openStream(
        pushing.http.url,
        { name: STAGE, arguments: source['input'], cursor: source['initialCursor'] },
        { headers: as('alice') },
      );
      await stream.next(method('notifications/events/active'));
      // The task's work in the emitting process is still running: emit from it now, while the stream waits.
      const started = Date.now();
      await emitting.tasks.engine.emitEvent(taskId, { type: STAGE, data: { index: 7 } });
      const event = await stream.next(method('notifications/events/event'), 5000);
      // Woken by the store's pub/sub, not found by the 5 s re-read.
      expect(Date.now() - started).toBeLessThan(2000);
      expect(event.params).toMatchObject({ eventId: `${taskId}:0`, data: { index: 7 } });
      gates.get(gate)?.();
      await stream.done;
      expect(stream.messages.find(method('notifications/events/terminated'))?.params?.['error']).toMatchObject({
        data: { reason: 'task_terminal', status: 'completed' },
      });
      // Another principal sees nothing of it on the other instance either.
      const foreign = await eventsPeer(pushing.http.url, as('bob')).request('events/poll', {
        name: STAGE,
        arguments: { taskId },
      });
      expect(foreign.error?.code).toBe(-32602);
    });
  });
}
