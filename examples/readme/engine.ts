import { createMcpTasks } from 'mcp-tasks';
import type { TaskLifecycleEvent } from 'mcp-tasks/engine';
import { createServer } from './server.js';

function audit(event: TaskLifecycleEvent): void {
  if (event.type === 'finished') console.log(`task ${event.task.taskId} ended ${event.task.status}`);
}

export const tasks = await createMcpTasks({
  server: createServer,
  tools: { slow_echo: 'optional' },
  engine: { onLifecycle: audit, leaseMs: 10_000 },
});
