import type { ConnectionOptions } from 'bullmq';

/** The queue every producer and worker of a deployment shares unless told otherwise. */
export const DEFAULT_QUEUE_NAME = 'mcp-tasks';

/** BullMQ job name of a task run. */
export const TASK_JOB_NAME = 'task';

/** What a queued job carries: the task and the run it starts (1 for the first run, then one more per re-run). */
export interface TaskJobData {
  taskId: string;
  attempt: number;
}

/** How a worker's run of one job ended, kept as the BullMQ job's return value for inspection. */
export interface TaskJobResult {
  taskId: string;
  attempt: number;
  outcome: 'finished' | 'skipped' | 'aborted' | 'handed-back';
  reason?: string;
}

/** A Redis URL (`redis://…`, `rediss://…`), or BullMQ connection options (including an ioredis instance). */
export type QueueConnection = string | ConnectionOptions;

/** BullMQ connection options from a URL or options. */
export function toConnectionOptions(connection: QueueConnection): ConnectionOptions {
  return typeof connection === 'string' ? { url: connection } : connection;
}

/** One job per run: a re-run after recovery gets a fresh id, while a duplicate add of the same run is a no-op. */
export function taskJobId(taskId: string, attempt: number): string {
  return `${taskId}-${attempt}`;
}
