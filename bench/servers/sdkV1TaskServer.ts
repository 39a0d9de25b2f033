// Benchmark server: the equivalent server on SDK 1.32's experimental tasks with its in-memory task store.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

import { preciseNow } from '../httpSession.js';

const taskStore = new InMemoryTaskStore();
const taskMessageQueue = new InMemoryTaskMessageQueue();

function buildServer(): McpServer {
  const server = new McpServer(
    { name: 'bench-sdk-1.32', version: '1' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue,
    },
  );
  server.experimental.tasks.registerToolTask(
    'complete_at',
    {
      description: 'Completes at the given time',
      inputSchema: { at: z.number() },
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async ({ at }, extra) => {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 1000 });
        setTimeout(
          () => {
            void extra.taskStore.storeTaskResult(task.taskId, 'completed', {
              content: [{ type: 'text', text: 'done' }],
              structuredContent: { completedAt: preciseNow() },
            });
          },
          Math.max(0, at - Date.now()),
        );
        return { task };
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
    },
  );
  return server;
}

const transports = new Map<string, StreamableHTTPServerTransport>();
const http = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
  const sessionId = req.headers['mcp-session-id'] as string | undefined;
  let transport = sessionId ? transports.get(sessionId) : undefined;
  if (!transport && isInitializeRequest(body)) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void transports.set(id, transport as StreamableHTTPServerTransport),
    });
    await buildServer().connect(transport);
  }
  if (!transport) {
    res.writeHead(400).end();
    return;
  }
  await transport.handleRequest(req, res, body);
});
http.listen(0, '127.0.0.1', () =>
  console.log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`),
);
process.on('SIGTERM', () => process.exit(0));
