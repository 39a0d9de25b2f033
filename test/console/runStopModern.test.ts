// A cancelled tool served over the 2026-07-28 internal link (a tool written for multi-round-trip input): its run ends
// when its handler really returns, as over the legacy link (runStop.test.ts), so one that ignores its abort is flagged.
import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import type { TimelineEntry } from '../../src/engine/index.js';
import { createMcpTasks, type McpTasks } from '../../src/server/index.js';

const GRACE_MS = 300;
const POLITE_STOP_MS = 150;

describe('a cancelled tool on the 2026-07-28 internal link', () => {
  let tasks: McpTasks | undefined;
  let release: () => void = () => {};
  afterEach(async () => {
    release();
    await tasks?.close();
  });

  async function start() {
    const createServer = () => {
      const server = new McpServer({ name: 'modern-stop', version: '1.0.0' });
      server.registerTool('deaf', { inputSchema: z.object({}) }, async () => {
        await new Promise<void>((resolve) => {
          release = resolve;
          setTimeout(resolve, 60_000).unref();
        });
        return { content: [] };
      });
      server.registerTool('polite', { inputSchema: z.object({}) }, async (_args, ctx) => {
        await new Promise<void>((resolve) =>
          ctx.mcpReq.signal.addEventListener('abort', () => setTimeout(resolve, POLITE_STOP_MS)),
        );
        return { content: [] };
      });
      return server;
    };
    const multiRoundTrip = { taskSupport: 'optional', inputStyle: 'multiRoundTrip' } as const;
    tasks = await createMcpTasks({
      server: createServer,
      tools: { deaf: multiRoundTrip, polite: multiRoundTrip },
      store: 'memory',
      engine: { abortGraceMs: GRACE_MS },
    });
    return tasks;
  }

  async function runThenCancel(t: McpTasks, tool: string): Promise<string> {
    const { task } = await t.engine.create({
      owner: 'o',
      request: { method: 'tools/call', params: { name: tool, arguments: {} } },
      dialect: 'ext-tasks',
      meta: { inputStyle: 'multiRoundTrip' },
    });
    for (let i = 0; i < 200 && (await t.engine.get('o', task.taskId)).attempts === 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    // The handler is running before it is told to stop.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await t.engine.cancel('o', task.taskId);
    return task.taskId;
  }

  async function runEnds(t: McpTasks, taskId: string, kind: string): Promise<TimelineEntry[]> {
    for (let i = 0; i < 300; i++) {
      const entries = (await t.engine.timeline('o', taskId)).filter(
        (e) => e.kind === 'run_ended' || e.kind === 'run_overdue',
      );
      if (entries.some((e) => e.kind === kind)) return entries;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no ${kind} entry`);
  }

  it('flags a handler that ignores its abort, then records when it returned', async () => {
    const t = await start();
    const taskId = await runThenCancel(t, 'deaf');
    expect((await runEnds(t, taskId, 'run_overdue')).map((e) => e.kind)).toEqual(['run_overdue']);
    release();
    const [, ended] = await runEnds(t, taskId, 'run_ended');
    expect(ended).toMatchObject({ kind: 'run_ended', ran: 'aborted' });
    expect(ended?.stopMs).toBeGreaterThanOrEqual(GRACE_MS);
  });

  it('records how long a handler that honours its abort took to stop', async () => {
    const t = await start();
    const taskId = await runThenCancel(t, 'polite');
    const entries = await runEnds(t, taskId, 'run_ended');
    expect(entries.map((e) => e.kind)).toEqual(['run_ended']);
    expect(entries[0]?.stopMs).toBeGreaterThanOrEqual(POLITE_STOP_MS - 10);
  });
});
