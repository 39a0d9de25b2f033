import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { createMcpTasks, serveHttp, type McpTasks } from '../../src/server/index.js';
import { HttpPeer, eventually } from '../helpers/rawWire.js';

function createServer(): McpServer {
  const server = new McpServer({ name: 'metrics', version: '1.0.0' });
  server.registerTool(
    'work',
    { inputSchema: z.object({ fail: z.boolean().optional(), ms: z.number().optional() }) },
    async ({ fail, ms }, ctx) => {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, ms ?? 0);
        ctx.mcpReq.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new Error('aborted'));
        });
      });
      return { content: [{ type: 'text', text: 'ok' }], ...(fail && { isError: true }) };
    },
  );
  return server;
}

/** The value of one sample line of the Prometheus text, or 0 when absent. */
function sample(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('Prometheus metrics (spec R72)', () => {
  let tasks: McpTasks | undefined;
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    await tasks?.close();
  });

  it('counts tasks by dialect and status, their durations, refusals and the executor load, served on /metrics', async () => {
    tasks = await createMcpTasks({
      server: createServer,
      tools: { work: 'optional' },
      store: 'memory',
      metrics: true,
      rateLimit: { perSecond: 1, burst: 30 },
    });
    const http = await serveHttp(tasks, { port: 0, metricsPath: '/metrics' });
    stop = () => http.close();
    const peer = new HttpPeer(http.url);
    await peer.initialize();
    const create = async (args: Record<string, unknown>) =>
      (
        (await peer.request('tools/call', { name: 'work', arguments: args, task: {} })).result?.['task'] as {
          taskId: string;
        }
      ).taskId;
    const done = await create({});
    const failed = await create({ fail: true });
    const slow = await create({ ms: 60_000 });
    await peer.request('tasks/result', { taskId: done });
    await peer.request('tasks/result', { taskId: failed });
    const metrics = tasks.metrics;
    await eventually(async () => /^mcp_tasks_running 1$/m.test((await metrics?.text()) ?? ''));
    await peer.request('tasks/cancel', { taskId: slow });
    for (let i = 0; i < 40; i++) await peer.request('tasks/get', { taskId: done });
    const text = await (await fetch(http.url.replace('/mcp', '/metrics'))).text();
    const core = 'dialect="2025-11-25"';
    expect(sample(text, 'mcp_tasks_created_total', core)).toBe(3);
    expect(sample(text, 'mcp_tasks_finished_total', `${core},status="completed"`)).toBe(1);
    expect(sample(text, 'mcp_tasks_finished_total', `${core},status="failed"`)).toBe(1);
    expect(sample(text, 'mcp_tasks_finished_total', `${core},status="cancelled"`)).toBe(1);
    expect(sample(text, 'mcp_tasks_duration_seconds_count', `${core},status="completed"`)).toBe(1);
    expect(sample(text, 'mcp_tasks_refused_total', 'limit="rate"')).toBeGreaterThan(0);
    expect(text).toMatch(/^mcp_tasks_running 0$/m);
    await peer.close();
  });
});
