export { ExecutorClosedError, InProcessExecutor, type InProcessExecutorOptions } from './InProcessExecutor.js';
