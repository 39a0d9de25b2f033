// The quick start's server factory, for the README's other snippets to import (the quick start itself stays one
// self-contained file, to copy as it is).
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';

export function createServer() {
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
