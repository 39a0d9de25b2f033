// `mcp-tasks/executors`: the in-process executor, the default, for composing a runtime by hand. The queue executor and
// its workers are in `mcp-tasks/worker`, so that BullMQ loads only there.
export {
  ExecutorClosedError,
  InProcessExecutor,
  type InProcessExecutorOptions,
} from '../executors/in-process/index.js';
