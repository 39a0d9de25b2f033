// `mcp-tasks/worker`: distributed execution over a BullMQ queue (docs/deployment.md) — the executor a server puts
// tasks on the queue with, and the workers that run them. The only entry point that loads BullMQ.

export { queueExecutor, type QueueExecutorSettings } from '../server/worker/index.js';
export { runWorker, type RunWorkerOptions, type WorkerHandle } from '../server/worker/index.js';
// What a worker takes of the events option: the servers' event types, and webhook publishing.
export type { WorkerEventsOptions } from '../events/index.js';
// The settings these take from the queue's executor and worker, and the worker a WorkerHandle holds.
export type {
  QueueExecutorOptions,
  QueueWorker,
  QueueWorkerEngine,
  QueueWorkerOptions,
} from '../executors/queue/index.js';
export { DEFAULT_QUEUE_NAME, type QueueConnection } from '../executors/queue/index.js';
export { QueueUnavailableError, TaskRunAbortedError } from '../executors/queue/index.js';
