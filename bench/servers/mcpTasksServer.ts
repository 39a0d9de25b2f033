// Benchmark server: an SDK 2.x server with mcp-tasks attached (store from MCP_TASKS_STORE, default memory).
// SIGUSR2 prints the process's memory after a full collection (run with --expose-gc) and the task runs it holds
// (running or waiting for a slot) on stderr.
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import { createMcpTasks, runtimeOf, serveHttp } from '../../src/server/index.js';
import { withSteps } from '../../src/workflow/index.js';
import { preciseNow } from '../httpSession.js';

function createServer(): McpServer {
  const server = new McpServer({ name: 'bench-mcp-tasks', version: '1' });
  server.registerTool(
    'complete_at',
    { description: 'Completes at the given time', inputSchema: z.object({ at: z.number() }) },
    async ({ at }) => {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
      return { content: [{ type: 'text', text: 'done' }], structuredContent: { completedAt: preciseNow() } };
    },
  );
  server.registerTool(
    'ask',
    { description: 'Asks the client a question and waits for the answer', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const form = { type: 'object' as const, properties: { answer: { type: 'string' as const } } };
      const answer = await ctx.mcpReq.elicitInput({ message: 'Answer?', requestedSchema: form } as never);
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
    },
  );
  server.registerTool(
    'nap',
    {
      description: 'A workflow that sleeps durably for `ms`, holding nothing meanwhile',
      inputSchema: z.object({ ms: z.number() }),
    },
    withSteps(async ({ ms }: { ms: number }, step) => {
      await step.sleep('nap', ms);
      return { content: [{ type: 'text', text: 'rested' }] };
    }),
  );
  return server;
}

const tasks = await createMcpTasks({
  server: createServer,
  tools: {
    complete_at: { taskSupport: 'optional', pollIntervalMs: 1000 },
    ask: { taskSupport: 'required', pollIntervalMs: 1000 },
    nap: { taskSupport: 'required', pollIntervalMs: 1000, retrySafe: true },
  },
  store: process.env['MCP_TASKS_STORE'] ?? 'memory',
  rateLimit: false,
  ...(process.env['MCP_TASKS_CONCURRENCY'] && { concurrency: Number(process.env['MCP_TASKS_CONCURRENCY']) }),
  limits: { maxActivePerOwner: 1_000_000, maxStoredPerOwner: 1_000_000 },
});
const http = await serveHttp(tasks, { port: 0 });
console.log(`listening on ${http.url}`);
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.();
  const { running, waiting } = runtimeOf(tasks).executor.load?.() ?? { running: 0, waiting: 0 };
  const events = http.handler.eventStoreBytes;
  console.error(`memory ${JSON.stringify({ ...process.memoryUsage(), runs: running + waiting, events })}`);
});
process.on(
  'SIGTERM',
  () =>
    void http
      .close()
      .then(() => tasks.close())
      .finally(() => process.exit(0)),
);
