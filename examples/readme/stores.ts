import pg from 'pg';

import { createMcpTasks } from 'mcp-tasks';
import { PostgresStore } from 'mcp-tasks/stores/postgres';
import { createServer } from './server.js';

// A store object instead of a spec string: here PostgreSQL on the application's own pool, in its own schema.
const pool = new pg.Pool({ connectionString: 'postgres://localhost/app' });
export const tasks = await createMcpTasks({
  server: createServer,
  tools: { slow_echo: 'optional' },
  store: new PostgresStore({ pool, schema: 'tasks' }),
});
