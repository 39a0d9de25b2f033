import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

import { createMcpTasks, serveHttp } from '../../../src/server/index.js';

/** How long `quick` works: long enough that a run's own time and the task's differ. */
export const QUICK_MS = 1500;

function createTaskServer(): McpServer {
  const server = new McpServer({ name: 'cli-task-server', version: '1.0.0' });
  server.registerTool(
    'quick',
    { description: 'Works a moment, then answers', inputSchema: z.object({ label: z.string().optional() }) },
    async ({ label }, ctx) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, QUICK_MS);
        ctx.mcpReq.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      return { content: [{ type: 'text', text: `done ${label ?? ''}` }] };
    },
  );
  server.registerTool(
    'greet',
    {
      description: 'Greets someone (plain)',
      inputSchema: z.object({ name: z.string().describe('Who to greet'), loud: z.boolean().optional() }),
    },
    ({ name, loud }) => ({ content: [{ type: 'text', text: loud === true ? `HELLO ${name}` : `hello ${name}` }] }),
  );
  return server;
}

export interface TaskServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Our runtime over Streamable HTTP, as a deployment without authentication runs it: 2025-11-25 sessions own their
 * tasks, the 2026 wire is stateless, and the fallback tools are on for hosts without tasks (as behind the proxy).
 */
export async function startTaskServer(): Promise<TaskServer> {
  const tasks = await createMcpTasks({
    server: createTaskServer,
    tools: { quick: { taskSupport: 'optional', pollIntervalMs: 100 } },
    store: 'memory',
    fallbackTools: true,
  });
  const http = await serveHttp(tasks, { port: 0 });
  return {
    url: http.url,
    async close() {
      await http.close();
      await tasks.close();
    },
  };
}
