import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serveConsole, TaskConsole, type ConsoleServerHandle } from '../../src/console/index.js';
import { TASK_STATUS_EVENT } from '../../src/engine/index.js';
import { encodeTaskEventCursor } from '../../src/events/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';
import { authenticate, gates, startEventsServer, type EventsServer } from './eventsServer.js';
import { eventsPeer } from './eventsPeer.js';

/**
 * The standalone console (`mcp-tasks console`) runs its own engine over the servers' store: a task it cancels gets
 * its `cancelled` status entry in the task's event log as a cancel on a server would, so a reader of the runtime's
 * status type on the server sees the task end.
 */
describe('a cancel from the standalone console, read as events on a server', () => {
  const path = join(tempDir(), 'console-events.db');
  let server: EventsServer;
  let store: SqliteStore;
  let taskConsole: TaskConsole;
  let running: ConsoleServerHandle;

  beforeAll(async () => {
    server = await startEventsServer(path, {}, { authenticate });
    store = new SqliteStore({ path });
    taskConsole = await TaskConsole.overStore(store, { token: 'console-admin-token-0123456789' });
    running = await serveConsole(taskConsole, { port: 0 });
  });
  afterAll(async () => {
    await running?.close();
    await store?.close();
    await server?.close();
    gates.get('console-cancel')?.();
  });

  it('TS8: the status type carries the cancelled entry', async () => {
    const alice = eventsPeer(server.http.url, { authorization: 'Bearer alice' });
    const created = await alice.request('tools/call', {
      name: 'staged',
      arguments: { stages: 0, stageMs: 0, gate: 'console-cancel' },
    });
    const taskId = created.result?.['taskId'] as string;
    expect(taskId).toEqual(expect.any(String));
    const response = await fetch(`${running.url}api/tasks/${encodeURIComponent(taskId)}/cancel`, {
      method: 'POST',
      headers: { authorization: 'Bearer console-admin-token-0123456789', 'x-console-request': '1' },
    });
    expect(response.status).toBe(200);
    const statuses = async () => {
      const polled = await alice.request('events/poll', {
        name: TASK_STATUS_EVENT,
        arguments: { taskId },
        cursor: encodeTaskEventCursor(taskId, 0),
      });
      const events = (polled.result?.['events'] ?? []) as Array<{ data: { status: string } }>;
      return events.map((event) => event.data.status);
    };
    await expect.poll(statuses, { timeout: 5000 }).toContain('cancelled');
  });
});
