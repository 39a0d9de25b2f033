import { createServer } from 'node:http';

import { createMcpTasks, serveHttp } from 'mcp-tasks';
import { generateWebhookSecret, TaskClient, verifyWebhook } from 'mcp-tasks/client';
import { CallbackPolicy, OutboxWebhookDeliveries } from 'mcp-tasks/engine';
import { MemoryStore } from 'mcp-tasks/stores/memory';
import { createServer as createMcpServer } from './server.js';

// The host's endpoint: answers the server's handshake once, then hears of the task's end without polling.
const secret = generateWebhookSecret();
const endpoint = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const { payload } = verifyWebhook(request.headers, Buffer.concat(chunks), secret); // throws on a forgery
    const body = payload as { type?: string; challenge?: string; data?: { taskId: string; status: string } };
    if (body.type === 'verification') return void response.end(JSON.stringify({ challenge: body.challenge }));
    if (body.data?.status === 'completed') console.log(`webhook: task ${body.data.taskId} completed`);
    response.writeHead(204).end();
  });
});
await new Promise<void>((listening) => endpoint.listen(0, '127.0.0.1', listening));
const hook = `http://127.0.0.1:${(endpoint.address() as { port: number }).port}`;

// The server: webhooks from the store's durable outbox; this loopback receiver allowed (SSRF guards refuse it).
const store = new MemoryStore();
const webhooks = new OutboxWebhookDeliveries({
  store: store.webhooks,
  policy: new CallbackPolicy({ allowOrigins: [hook] }),
});
const tasks = await createMcpTasks({
  server: createMcpServer,
  tools: { slow_echo: 'optional' },
  store,
  events: { types: [], webhooks },
});
const authenticate = () => ({ token: 'host', clientId: 'host', scopes: [] }); // webhooks need a principal
const { url } = await serveHttp(tasks, { port: 0, authenticate });
webhooks.start();

const client = await TaskClient.connect({ url });
const task = await client.callTool('slow_echo', { text: 'hi' }, { follow: false });
const status = 'io.github.mcp-tasks.task_status';
await client.events().subscribe(status, { taskId: task.taskId }, { url: `${hook}/hooks`, secret });
