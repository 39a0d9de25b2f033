export { queueExecutor, type QueueExecutorSettings } from './queueExecutor.js';
export { runWorker, type RunWorkerOptions, type WorkerHandle } from './runWorker.js';
