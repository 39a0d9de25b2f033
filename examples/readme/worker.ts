import { createMcpTasks, serveHttp } from 'mcp-tasks';
import { queueExecutor, runWorker } from 'mcp-tasks/worker';
import { createServer } from './server.js';

const store = 'postgres://localhost/tasks'; // every server instance and worker shares the store…
const redisUrl = 'redis://localhost:6379'; // …and the BullMQ queue

// A server instance: takes requests and queues the tasks.
const tasks = await createMcpTasks({
  server: createServer,
  tools: { slow_echo: 'optional' },
  store,
  executor: queueExecutor({ redisUrl }),
});
await serveHttp(tasks, { port: 3000 });

// A worker (in another process): runs the queued tasks on instances of the same server.
const worker = await runWorker({ server: createServer, store, redisUrl, concurrency: 16 });
process.once('SIGTERM', () => void worker.close());
