import type { ConnectionOptions } from 'bullmq';

import { reconnectDelayMs, type TaskRecord } from '../../engine/index.js';

/** The queue every producer and worker of a deployment shares unless told otherwise. */
export const DEFAULT_QUEUE_NAME = 'mcp-tasks';

/** BullMQ job name of a task run. */
export const TASK_JOB_NAME = 'task';

/** What a queued job carries: the task and the run it starts (1 for the first run, then one more per re-run). */
export interface TaskJobData {
  taskId: string;
  attempt: number;
  /**
   * The task as it was queued, when it is small (JOB_RECORD_MAX_BYTES): the worker's claim is a compare-and-set on
   * it, without reading the task first. Should the task have changed (or not be stored yet), the claim reads it.
   */
  record?: TaskRecord;
}

/**
 * The largest task a job carries (its JSON). A job is kept after it finishes (`keepCompleted`, 10,000 by default),
 * so this bounds what the carried copies hold in the queue's Redis: 20 MB at most with the defaults.
 */
export const JOB_RECORD_MAX_BYTES = 2048;

/** BullMQ job name of a durable timer: a delayed job that wakes a parked task (Executor.scheduleWake). */
export const WAKE_JOB_NAME = 'wake';

/** What a wake job carries: the task and the wake time it was parked until (the engine's WakeEntry). */
export interface WakeJobData {
  taskId: string;
  wakeAt: number;
}

/** How a wake job ended: the task resumed, or the timer no longer concerned it (one that came early is put back). */
export interface WakeJobResult {
  taskId: string;
  wakeAt: number;
  outcome: 'woken' | 'stale';
}

export type QueueJobName = typeof TASK_JOB_NAME | typeof WAKE_JOB_NAME;
export type QueueJobData = TaskJobData | WakeJobData;
export type QueueJobResult = TaskJobResult | WakeJobResult;

/** How a worker's run of one job ended, kept as the BullMQ job's return value for inspection. */
export interface TaskJobResult {
  taskId: string;
  attempt: number;
  outcome: 'finished' | 'skipped' | 'aborted' | 'handed-back';
  reason?: string;
}

/** A Redis URL (`redis://…`, `rediss://…`), or BullMQ connection options (including an ioredis instance). */
export type QueueConnection = string | ConnectionOptions;

/**
 * BullMQ connection options from a URL or options. Unless the options say otherwise, a lost connection is tried again
 * within half a second (`reconnectDelayMs`): BullMQ's own back-off grows to 20 s, so work would resume long after Redis.
 */
export function toConnectionOptions(connection: QueueConnection): ConnectionOptions {
  if (typeof connection === 'string') return { url: connection, retryStrategy: reconnectDelayMs };
  // A client the caller made (it has methods) or options naming their own back-off are used as they are.
  if ('retryStrategy' in connection || typeof (connection as { duplicate?: unknown }).duplicate === 'function') {
    return connection;
  }
  return { ...connection, retryStrategy: reconnectDelayMs } as ConnectionOptions;
}

/** One job per run: a re-run after recovery gets a fresh id, while a duplicate add of the same run is a no-op. */
export function taskJobId(taskId: string, attempt: number): string {
  return `${taskId}-${attempt}`;
}

/**
 * One job per timer: a task parked again until the same time (a per-task deadline shared by its waits) adds a
 * duplicate, which BullMQ ignores while the first is kept; the worker re-checks the record whenever it fires.
 */
export function wakeJobId(taskId: string, wakeAt: number): string {
  return `${taskId}-wake-${wakeAt}`;
}
