import { McpServer } from '@modelcontextprotocol/server';
import { createMcpTasks, serveHttp } from 'mcp-tasks';
import * as z from 'zod';

function createServer() {
  const server = new McpServer({ name: 'hello-tasks', version: '1.0.0' });
  server.registerTool(
    'slow_echo',
    { description: 'Echoes its text after a second', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      return { content: [{ type: 'text', text }] };
    },
  );
  return server;
}

const tasks = await createMcpTasks({
  server: createServer,
  tools: { slow_echo: { taskSupport: 'optional' } },
  store: './mcp-tasks.db',
});
const { url } = await serveHttp(tasks, { port: 3000 });
console.log(`serving on ${url}`);
