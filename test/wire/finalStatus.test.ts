import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { MAX_STATUS_MESSAGE_BYTES } from '../../src/engine/index.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { eventually, HttpPeer, ModernPeer, type Response } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

const PROGRESS = 'dev.mcp-tasks/progress';
const SEP_TASK = 'modelcontextprotocol.io/task';
const SEP_RELATED = 'modelcontextprotocol.io/related-task';
const STEPS = 20;

async function report(ctx: ServerContext, progress: number, message: string): Promise<void> {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token !== undefined)
    await ctx.mcpReq.notify({
      method: 'notifications/progress',
      params: { progressToken: token, progress, total: STEPS, message },
    });
}

/**
 * `burst` reports STEPS progress messages back to back and returns: all but the first fall inside the runtime's
 * 250 ms status throttle, so only a last report that lands with the outcome keeps the finished task from showing
 * `step 1/20`. `burst_error` does the same and ends with a tool error; `shout` reports one huge message.
 */
function createServer(): McpServer {
  const server = new McpServer({ name: 'final-status', version: '1' });
  const burst = async (ctx: ServerContext) => {
    for (let step = 1; step <= STEPS; step++) await report(ctx, step, `step ${step}/${STEPS}`);
  };
  server.registerTool('burst', { inputSchema: z.object({}) }, async (_args, ctx) => {
    await burst(ctx);
    return { content: [{ type: 'text', text: 'burst done' }] };
  });
  server.registerTool('burst_error', { inputSchema: z.object({}) }, async (_args, ctx) => {
    await burst(ctx);
    return { content: [{ type: 'text', text: 'the burst went wrong' }], isError: true };
  });
  server.registerTool('shout', { inputSchema: z.object({ bytes: z.number() }) }, async ({ bytes }, ctx) => {
    // A multi-byte character straddles the cap: the cut must fall on a code point boundary.
    await report(ctx, 1, 'é'.repeat(Math.ceil(bytes / 2)));
    return { content: [{ type: 'text', text: 'shouted' }] };
  });
  return server;
}

/** A task's last word as each generation's `tasks/get` shows it: its statusMessage and the progress in `_meta`. */
interface FinalView {
  status: unknown;
  statusMessage: unknown;
  progress: { progress?: number; total?: number; message?: string } | undefined;
}

function viewOf(response: Response): FinalView {
  const result = response.result ?? {};
  const meta = result['_meta'] as Record<string, unknown> | undefined;
  return {
    status: result['status'],
    statusMessage: result['statusMessage'],
    progress: meta?.[PROGRESS] as FinalView['progress'],
  };
}

describe('a finished task shows the last report, on every generation', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  let legacy: HttpPeer;
  let modern: ModernPeer;

  beforeAll(async () => {
    tasks = await createMcpTasks({
      server: createServer,
      tools: { burst: 'optional', burst_error: 'optional', shout: 'optional' },
      store: join(tempDir(), 'tasks.db'),
    });
    http = await serveHttp(tasks, { port: 0 });
    legacy = new HttpPeer(http.url);
    await legacy.initialize();
    modern = new ModernPeer(http.url);
  });
  afterAll(async () => {
    await legacy.close();
    await http.close();
    await tasks.close();
  });

  /** Runs `tool` as a task of `generation` to its end; the final `tasks/get` as the requestor sees it. */
  async function finish(generation: string, tool: string, args: Record<string, unknown> = {}): Promise<FinalView> {
    if (generation === '2025-11-25') {
      // The requestor's own progress token: progress also reaches it as notifications (spec R55).
      const created = await legacy.request('tools/call', {
        name: tool,
        arguments: args,
        task: {},
        _meta: { progressToken: randomUUID() },
      });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      await legacy.request('tasks/result', { taskId });
      return viewOf(await legacy.request('tasks/get', { taskId }));
    }
    if (generation === 'sep-1686') {
      const taskId = randomUUID();
      await legacy.request('tools/call', { name: tool, arguments: args, _meta: { [SEP_TASK]: { taskId } } });
      return viewOf(await legacy.request('tasks/get', { taskId, _meta: { [SEP_RELATED]: { taskId } } }));
    }
    // The 2026 extension: the requestor sends no progress token (spec E16); the runtime gives the run its own.
    const created = await modern.request('tools/call', { name: tool, arguments: args });
    expect(created.result?.['resultType']).toBe('task');
    const taskId = created.result?.['taskId'] as string;
    return eventually(async () => {
      const view = viewOf(await modern.request('tasks/get', { taskId }));
      return ['completed', 'failed', 'cancelled'].includes(view.status as string) ? view : undefined;
    });
  }

  for (const generation of ['2025-11-25', 'ext-2026', 'sep-1686']) {
    it(`${generation}: a completed task's message and progress are the tool's last report`, async () => {
      const view = await finish(generation, 'burst');
      expect(view.status).toBe('completed');
      // SEP-1686's task has no statusMessage field: its progress message stands for it.
      if (generation !== 'sep-1686') expect(view.statusMessage).toBe(`step ${STEPS}/${STEPS}`);
      expect(view.progress).toEqual({ progress: STEPS, total: STEPS, message: `step ${STEPS}/${STEPS}` });
    });

    it(`${generation}: a tool error ends with a diagnostic or the last report, never an older one`, async () => {
      const view = await finish(generation, 'burst_error');
      // The generations disagree on isError (2025-11-25: failed, the extension and SEP-1686: completed).
      if (view.status === 'failed') {
        if (generation !== 'sep-1686')
          expect(view.statusMessage).toBe('The tool reported an error: the burst went wrong');
      } else {
        expect(view.status).toBe('completed');
        if (generation !== 'sep-1686') expect(view.statusMessage).toBe(`step ${STEPS}/${STEPS}`);
      }
      expect(view.progress).toMatchObject({ progress: STEPS, total: STEPS });
    });
  }

  it('caps a 1 MiB progress message at MAX_STATUS_MESSAGE_BYTES of UTF-8, cut on a code point, with an ellipsis', async () => {
    const view = await finish('2025-11-25', 'shout', { bytes: 1024 * 1024 });
    const message = view.statusMessage as string;
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES);
    expect(Buffer.byteLength(message)).toBeGreaterThan(MAX_STATUS_MESSAGE_BYTES - 4);
    expect(message).toMatch(/^é+…$/u);
    expect(view.progress?.message).toBe(message);
  });
});
