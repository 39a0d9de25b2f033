import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { ServerFactory } from '../../server/index.js';
import { runWorker, type RunWorkerOptions } from '../../server/worker/index.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { Reporter } from '../Reporter.js';
import { UsageError } from '../UsageError.js';

export interface WorkerOptions {
  module: string;
  export: string;
  store?: string;
  redis?: string;
  concurrency: string;
  maxRunningPerOwner?: string;
  policies: string;
  queue?: string;
}

/**
 * `worker`: runs queued tasks for server instances that use the queue executor. It loads the same server module they
 * do (the author's tools) and runs each task on fresh instances of it, until SIGTERM/SIGINT, then finishes or hands
 * back what it holds.
 */
export async function runWorkerCommand(options: WorkerOptions, reporter: Reporter): Promise<ExitCode> {
  const store = options.store ?? process.env['MCP_TASKS_STORE'];
  const redisUrl = options.redis ?? process.env['REDIS_URL'];
  if (!store) throw new UsageError('--store (or MCP_TASKS_STORE) names the task store the server instances share');
  if (!redisUrl) throw new UsageError('--redis (or REDIS_URL) names the Redis of the job queue');
  const concurrency = positiveInteger('--concurrency', options.concurrency);
  const maxRunningPerOwner =
    options.maxRunningPerOwner === undefined
      ? undefined
      : positiveInteger('--max-running-per-owner', options.maxRunningPerOwner);
  const module = (await import(pathToFileURL(resolve(options.module)).href)) as Record<string, unknown>;
  const factory = module[options.export] ?? module['default'];
  if (typeof factory !== 'function') {
    throw new UsageError(
      `${options.module} exports no server factory named "${options.export}" (nor a default export)`,
    );
  }
  const policies = module[options.policies];
  if (policies !== undefined && (typeof policies !== 'object' || policies === null))
    throw new UsageError(`${options.module} exports "${options.policies}", but it is not an object of tool policies`);
  const worker = await runWorker({
    server: factory as ServerFactory,
    store,
    redisUrl,
    concurrency,
    ...(maxRunningPerOwner !== undefined && { maxRunningPerOwner }),
    ...(policies !== undefined && { tools: policies as NonNullable<RunWorkerOptions['tools']> }),
    ...(options.queue !== undefined && { queueName: options.queue }),
  });
  reporter.note(`worker ${worker.runnerId} running tasks from ${redisUrl}`);
  await new Promise<void>((done) => {
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
  await worker.close();
  return EXIT_CODES.completed;
}

function positiveInteger(flag: string, value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new UsageError(`${flag} is a positive integer; got "${value}"`);
  return number;
}
