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
export { QueueWorker, type QueueWorkerEngine, type QueueWorkerOptions } from './QueueWorker.js';
// Moved to the engine's run path; kept here for code importing it from the queue executor.
export { TaskRunAbortedError } from '../../engine/index.js';
