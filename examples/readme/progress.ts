import { McpServer } from '@modelcontextprotocol/server';
import { createMcpTasks, serveHttp } from 'mcp-tasks';
import * as z from 'zod';

function createServer() {
  const server = new McpServer({ name: 'indexer', version: '1.0.0' });
  server.registerTool(
    'index_files',
    { inputSchema: z.object({ files: z.array(z.string()) }) },
    async ({ files }, ctx) => {
      for (const [index, file] of files.entries()) {
        ctx.mcpReq.signal.throwIfAborted(); // the task was cancelled
        await new Promise((resolve) => setTimeout(resolve, 100)); // index `file`
        const progressToken = ctx.mcpReq._meta?.progressToken; // a task run always has one
        if (progressToken !== undefined)
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress: index + 1, total: files.length, message: `indexed ${file}` },
          });
      }
      return { content: [{ type: 'text', text: `indexed ${files.length} files` }] };
    },
  );
  return server;
}

const tasks = await createMcpTasks({
  server: createServer,
  tools: { index_files: { taskSupport: 'optional', retrySafe: true, pollIntervalMs: 2000 } },
  store: './mcp-tasks.db', // or 'memory', 'postgres://…', 'redis://…'
});
await serveHttp(tasks, { port: 3000 });
