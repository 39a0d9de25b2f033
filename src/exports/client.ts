// `mcp-tasks/client`: the requestor side — run tools as tasks against any MCP server (every generation, or none),
// follow them with handles, answer their questions, and keep handles across a host restart (docs/client.md).

export type { CallToolResult, Tool } from '../client/index.js';
export { TaskClient, type CallToolOptions, type TaskClientOptions, type TaskList } from '../client/index.js';
export { TaskHandle, type TaskProgress, type TaskSnapshot } from '../client/index.js';
export { outcomeError, textOf, type TaskOutcome, type TaskPayload } from '../client/index.js';
export { isTerminalStatus, TASK_STATUSES, type TaskStatus, type TerminalTaskStatus } from '../client/index.js';
export { HandleStore, type StoredHandle } from '../client/index.js';
export type { CallMode, DialectName, DialectPreference } from '../client/index.js';
export { DEFAULT_POLL_POLICY, type PollPolicy } from '../client/index.js';
export type { HttpTarget, StdioTarget, TaskTarget } from '../client/index.js';
export type {
  ElicitationHandler,
  ElicitationParams,
  InputContext,
  InputHandlers,
  SamplingHandler,
  SamplingParams,
} from '../client/index.js';

// Every error extends TaskClientError with a stable `kind`.
export {
  TaskCancelledError,
  TaskClientError,
  TaskConnectionError,
  TaskFailedError,
  TaskInputError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskRpcError,
  type RpcErrorObject,
} from '../client/index.js';
