export {
  DEFAULT_QUEUE_NAME,
  TASK_JOB_NAME,
  taskJobId,
  toConnectionOptions,
  type QueueConnection,
  type TaskJobData,
  type TaskJobResult,
} from './queueJob.js';
export { QueueExecutor, QueueUnavailableError, type QueueExecutorOptions } from './QueueExecutor.js';
export { QueueWorker, TaskRunAbortedError, type QueueWorkerEngine, type QueueWorkerOptions } from './QueueWorker.js';
