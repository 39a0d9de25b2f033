import { createMcpTasks } from 'mcp-tasks';
import { StoreUnavailableError } from 'mcp-tasks/errors';
import { createServer } from './server.js';

try {
  await createMcpTasks({ server: createServer, tools: { slow_echo: 'optional' }, store: process.env['TASKS_DB'] });
} catch (error) {
  // Each class maps to one JSON-RPC error on the wire; here it tells a start-up failure from a bug.
  if (!(error instanceof StoreUnavailableError)) throw error;
  console.error(`no task store: ${error.message}`);
  process.exitCode = 1;
}
