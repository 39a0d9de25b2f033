import type { Executor, TaskEngine } from '../../engine/index.js';
import { QueueExecutor, type QueueExecutorOptions } from '../../executors/queue/index.js';

export interface QueueExecutorSettings extends Omit<QueueExecutorOptions, 'engine' | 'connection' | 'logger'> {
  /** Redis for the job queue (`redis://…`); workers started with `runWorker` must use the same Redis and queue. */
  redisUrl: string;
}

/**
 * The `executor` option of `createMcpTasks` for distributed execution: tasks are queued on BullMQ and run by worker
 * processes (`runWorker`) on the shared store, instead of in this process.
 */
export function queueExecutor(settings: QueueExecutorSettings): (engine: TaskEngine) => Executor {
  const { redisUrl, ...options } = settings;
  return (engine) => new QueueExecutor({ ...options, engine, store: engine.store, connection: redisUrl });
}
