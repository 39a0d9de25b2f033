import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

import type { McpTasks } from 'mcp-tasks';
import type { ServerFactoryContext, ServerLike } from 'mcp-tasks/types';
import { createServer } from './server.js';

// A factory that builds per era and caller (the runtime calls it per connection and per task run).
export function serverFor(context: ServerFactoryContext): ServerLike {
  if (context.authInfo?.scopes?.includes('admin')) console.log(`an admin connected (${context.era} wire)`);
  return createServer();
}

// Any server of either SDK generation, with tasks, on stdio.
export async function serveStdio(tasks: McpTasks): Promise<void> {
  await tasks.attach(createServer()).connect(new StdioServerTransport());
}
