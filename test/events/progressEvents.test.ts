import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { PROGRESS_EVENT_INTERVAL_MS, TASK_PROGRESS_EVENT } from '../../src/engine/index.js';
import { encodeTaskEventCursor } from '../../src/events/index.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { emitTaskEvent } from '../../src/workflow/index.js';
import { eventually, type ModernPeer } from '../helpers/rawWire.js';
import { NOTE } from './eventsServer.js';
import { eventsPeer, method, openStream } from './eventsPeer.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `chatty` reports progress every `everyMs` for `reports` reports; `notes_then_progress` fills the log first. */
function createServer(): McpServer {
  const server = new McpServer({ name: 'progress-events', version: '1.0.0' });
  server.registerTool(
    'chatty',
    { inputSchema: z.object({ reports: z.number(), everyMs: z.number() }) },
    async ({ reports, everyMs }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let n = 1; n <= reports; n++) {
        if (progressToken !== undefined)
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress: n, total: reports, message: `report ${n}` },
          });
        await sleep(everyMs);
      }
      return { content: [{ type: 'text', text: 'done' }] };
    },
  );
  server.registerTool(
    'notes_then_progress',
    { inputSchema: z.object({ notes: z.number() }) },
    async ({ notes }, ctx) => {
      for (let n = 0; n < notes; n++) await emitTaskEvent(ctx, NOTE, { text: `note ${n}` });
      const progressToken = ctx.mcpReq._meta?.progressToken;
      if (progressToken !== undefined)
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 2 } });
      await sleep(400); // past the run's own 250 ms throttle, so the report is stored before the next emit
      const after = await emitTaskEvent(ctx, NOTE, { text: 'after the progress report' });
      let refused = '';
      try {
        await emitTaskEvent(ctx, TASK_PROGRESS_EVENT, { taskId: 'x', progress: 1 });
      } catch (error) {
        refused = (error as Error).message;
      }
      return { content: [{ type: 'text', text: JSON.stringify({ after, refused }) }] };
    },
  );
  return server;
}

describe('progress reports as events (the 2026 tasks extension sends no progress notifications)', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  let peer: ModernPeer;

  beforeAll(async () => {
    tasks = await createMcpTasks({
      server: createServer,
      tools: { chatty: 'optional', notes_then_progress: 'optional' },
      store: 'memory',
      limits: { eventsPerTask: 10 },
      events: {
        types: [
          {
            name: NOTE,
            description: 'A note',
            payloadSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          },
        ],
      },
    });
    http = await serveHttp(tasks, { port: 0 });
    peer = eventsPeer(http.url);
  });
  afterAll(async () => {
    await http.close();
    await tasks.close();
  });

  async function call(name: string, args: Record<string, unknown>): Promise<string> {
    const created = await peer.request('tools/call', { name, arguments: args });
    expect(created.error, JSON.stringify(created.error)).toBeUndefined();
    return created.result?.['taskId'] as string;
  }

  it('the progress type is listed beside the task status type, with its payload schema', async () => {
    const listed = await peer.request('events/list', {});
    const types = listed.result?.['events'] as Array<Record<string, unknown>>;
    expect(types.find((type) => type['name'] === TASK_PROGRESS_EVENT)).toMatchObject({
      delivery: ['poll', 'push'],
      payloadSchema: { required: ['taskId', 'progress'] },
    });
  });

  it('a chatty tool’s reports reach a push stream as progress events, coalesced to about one a second', async () => {
    const reports = 60;
    const taskId = await call('chatty', { reports, everyMs: 25 }); // ~1.5 s of reports
    const started = Date.now();
    const stream = await openStream(http.url, {
      name: TASK_PROGRESS_EVENT,
      arguments: { taskId },
      cursor: encodeTaskEventCursor(taskId, 0),
    });
    await stream.done;
    const elapsed = Date.now() - started;
    const events = stream.messages.filter(method('notifications/events/event'));
    const data = events.map((event) => event.params?.['data'] as Record<string, unknown>);
    expect(data.length).toBeGreaterThanOrEqual(1);
    // One entry per interval at most (plus the first, at once), however many reports came.
    expect(data.length).toBeLessThanOrEqual(Math.ceil(elapsed / PROGRESS_EVENT_INTERVAL_MS) + 1);
    expect(data.length).toBeLessThan(reports / 4);
    for (const entry of data) {
      expect(entry).toMatchObject({ taskId, total: reports });
      expect(entry['message']).toBe(`report ${String(entry['progress'])}`);
    }
    const values = data.map((entry) => entry['progress'] as number);
    expect([...values].sort((a, b) => a - b)).toEqual(values);
    expect(stream.messages.find(method('notifications/events/terminated'))?.params?.['error']).toMatchObject({
      data: { reason: 'task_terminal', status: 'completed' },
    });
  });

  it('progress entries stop at half of eventsPerTask, so the work’s own events keep their room; work cannot emit the type', async () => {
    // 10 entries per task: 5 notes fill half: the progress report is not logged; a sixth note still is.
    const taskId = await call('notes_then_progress', { notes: 5 });
    await eventually(async () => (await tasks.engine.store.get(taskId))?.status === 'completed');
    const log = await tasks.engine.store.eventLog!.read(taskId, 0, 100);
    expect(log.filter((entry) => entry.type === TASK_PROGRESS_EVENT)).toEqual([]);
    expect(log.filter((entry) => entry.type === NOTE)).toHaveLength(6);
    expect(log.at(-1)?.data).toMatchObject({ status: 'completed' });
    const outcome = JSON.stringify((await tasks.engine.store.get(taskId))?.outcome);
    expect(outcome).toContain(`Event type ${TASK_PROGRESS_EVENT} is not registered`);
  });
});
