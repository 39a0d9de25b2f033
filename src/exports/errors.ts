// `mcp-tasks/errors`: the typed errors the runtime raises (start-up, limits, a task's lifecycle), all extending
// TaskError; each maps to one JSON-RPC error (src/protocol/errorCodes.ts). The root exports TaskError and isTaskError.
export {
  ExecutorUnavailableError,
  InvalidCursorError,
  InvalidTransitionError,
  isTaskError,
  StoreUnavailableError,
  TaskConflictError,
  TaskError,
  TaskEventRejectedError,
  TaskExpiredError,
  TaskLimitError,
  TaskNotFoundError,
  TaskTerminalError,
  TaskTooDeepError,
  TaskTooLargeError,
} from '../engine/index.js';
