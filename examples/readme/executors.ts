import { createMcpTasks } from 'mcp-tasks';
import { InProcessExecutor } from 'mcp-tasks/executors';
import { createServer } from './server.js';

// The default executor, composed by hand: 4 tasks at once, at most 2 of one owner.
export const tasks = await createMcpTasks({
  server: createServer,
  tools: { slow_echo: 'optional' },
  executor: (engine, work) => new InProcessExecutor({ engine, work, concurrency: 4, maxRunningPerOwner: 2 }),
});
