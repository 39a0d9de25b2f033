import { randomUUID } from 'node:crypto';

import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

import { serveLocal } from '../../helpers/serveLocal.js';

/**
 * A real 2025-11-25 server built with the v1 SDK's experimental tasks, with the task capabilities a test chooses,
 * so the client's capability checks meet a peer that genuinely lacks `tasks.cancel` or `tasks` altogether.
 */
export interface V1TaskServer {
  url: string;
  close(): Promise<void>;
}

const CountdownArgs = { ms: z.number() };

/** A task tool that completes `ms` milliseconds after it was created; `onCreated` sees each new task id. */
export function registerCountdownTask(server: McpServer, name: string, onCreated?: (taskId: string) => void): void {
  server.experimental.tasks.registerToolTask(
    name,
    { inputSchema: CountdownArgs, execution: { taskSupport: 'optional' } },
    {
      createTask: async ({ ms }, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 100 });
        onCreated?.(task.taskId);
        setTimeout(() => {
          void extra.taskStore
            .storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `counted down ${ms} ms` }] })
            .catch(() => undefined);
        }, ms);
        return { task };
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      // The stored result is the CallToolResult stored above.
      getTaskResult: async (_args, extra) =>
        (await extra.taskStore.getTaskResult(extra.taskId)) as { content: Array<{ type: 'text'; text: string }> },
    },
  );
}

function buildServer(tasks: Record<string, unknown> | undefined, store: InMemoryTaskStore): McpServer {
  const server = new McpServer(
    { name: 'v1-task-server', version: '1.0.0' },
    {
      capabilities: { tools: {}, ...(tasks !== undefined && { tasks }) },
      ...(tasks !== undefined && { taskStore: store }),
    },
  );
  if (tasks === undefined) {
    server.registerTool('countdown', { inputSchema: CountdownArgs }, async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: 'text', text: `counted down ${ms} ms` }] };
    });
    return server;
  }
  registerCountdownTask(server, 'countdown');
  return server;
}

export async function startV1TaskServer(tasks: Record<string, unknown> | undefined): Promise<V1TaskServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const stores: InMemoryTaskStore[] = [];
  const http = await serveLocal(async (request, response) => {
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      const store = new InMemoryTaskStore();
      stores.push(store);
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void transports.set(id, created),
      });
      await buildServer(tasks, store).connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response);
  });
  return {
    url: http.url,
    async close() {
      for (const store of stores) store.cleanup();
      for (const transport of transports.values()) await transport.close().catch(() => undefined);
      http.close();
    },
  };
}
