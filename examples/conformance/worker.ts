// The conformance fixture worker: `npm run worker:conformance`. Runs the fixture tools for fixture servers started
// with MCP_TASKS_EXECUTOR=queue. Environment:
//   MCP_TASKS_STORE                the store the servers share (postgres://…, redis://…, a SQLite file path); required
//   REDIS_URL                      Redis of the job queue; required
//   MCP_TASKS_QUEUE                BullMQ queue name (default mcp-tasks)
//   MCP_TASKS_WORKER_CONCURRENCY   tasks at once (default 16)
//   MCP_TASKS_TOOL_CONCURRENCY     per-tool concurrency limits across the workers, `tool:n,tool:n`
//   MCP_TASKS_LEASE_MS             lease of a running task (default 6 s); a dead worker is noticed within 4/3 of it
//   MCP_TASKS_WAKE_INTERVAL_MS     the wake-at index poll, a safety net behind the queue's delayed wake jobs (default 10 s)
//   MCP_TASKS_SHUTDOWN_TIMEOUT_MS  how long SIGTERM lets running tasks finish before handing them back (default 30 s)
//   MCP_TASKS_TOOL_EVENTS          a file to which every tool start, end and abort is appended as a JSON line (tests)
// Logs are JSON lines on stderr; "fixture worker ready" once it takes jobs.
import type { EngineLogger } from 'mcp-tasks/engine';
import { runWorker } from 'mcp-tasks/worker';
import { fixturePolicies } from './fixturePolicies.js';
import { createFixtureServer } from './fixtureTools.js';
import { withToolEvents } from './withToolEvents.js';

const env = (name: string): number | undefined => (process.env[name] ? Number(process.env[name]) : undefined);
const required = (name: string): string => {
  const value = process.env[name];
  if (!value) {
    console.error(`mcp-tasks fixture worker: ${name} is required`);
    process.exit(2);
  }
  return value;
};

const log = (level: string, fields: Record<string, unknown>, message: string) =>
  process.stderr.write(`${JSON.stringify({ level, time: Date.now(), pid: process.pid, message, ...fields })}\n`);
const logger: EngineLogger = {
  info: (fields, message) => log('info', fields, message),
  warn: (fields, message) => log('warn', fields, message),
  error: (fields, message) => log('error', fields, message),
};

const toolEvents = process.env['MCP_TASKS_TOOL_EVENTS'];
const leaseMs = env('MCP_TASKS_LEASE_MS');
const wakeIntervalMs = env('MCP_TASKS_WAKE_INTERVAL_MS');

const worker = await runWorker({
  server: toolEvents ? withToolEvents(toolEvents) : createFixtureServer,
  store: required('MCP_TASKS_STORE'),
  redisUrl: required('REDIS_URL'),
  ...(process.env['MCP_TASKS_QUEUE'] && { queueName: process.env['MCP_TASKS_QUEUE'] }),
  ...(env('MCP_TASKS_WORKER_CONCURRENCY') !== undefined && { concurrency: env('MCP_TASKS_WORKER_CONCURRENCY') }),
  ...(env('MCP_TASKS_SHUTDOWN_TIMEOUT_MS') !== undefined && {
    shutdownTimeoutMs: env('MCP_TASKS_SHUTDOWN_TIMEOUT_MS'),
  }),
  tools: fixturePolicies(process.env['MCP_TASKS_TOOL_CONCURRENCY']),
  engine: { ...(leaseMs !== undefined && { leaseMs }), ...(wakeIntervalMs !== undefined && { wakeIntervalMs }) },
  logger,
});
logger.info({ runner: worker.runnerId }, 'fixture worker ready');

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ runner: worker.runnerId, signal }, 'fixture worker shutting down');
  await worker.close().catch((error: unknown) => logger.error({ error: String(error) }, 'shutdown failed'));
  logger.info({ runner: worker.runnerId }, 'fixture worker stopped');
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
