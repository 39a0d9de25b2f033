// The package root, `mcp-tasks`: what a server author needs to add tasks to an MCP server. Everything here is public
// API (semver applies); everything else is reached through a subpath (src/exports/) or is internal. The root loads
// no database driver, queue client or metrics library: stores load when their spec is chosen, the queue executor
// and workers live in `mcp-tasks/worker`.

// The runtime: add tasks to servers built with the official SDK, the per-tool policy and the options.
export { createMcpTasks, McpTasks, type McpTasksOptions, type TaskSupport } from './server/index.js';
export type { Caller, ServerFactory, ServerFactoryContext, ServerLike, ToolTaskPolicy } from './server/index.js';
export { DEFAULT_RATE_LIMIT, type RateLimit } from './server/index.js';
export { defaultRecoveryPolicy, type RecoveryDecision, type RecoveryPolicy } from './engine/index.js';
export type { EngineLimits, EngineLogger, TaskStore } from './engine/index.js';

// Serving: Streamable HTTP (a node:http server, or the fetch-style handler to mount elsewhere), bearer auth, stdio.
export { serveHttp, type HttpServerHandle, type ServeHttpOptions } from './server/index.js';
export { createTasksHttpHandler, type TasksHttpHandler, type TasksHttpHandlerOptions } from './server/index.js';
export { jwtAuth, type BearerAuth, type JwtAuthOptions } from './server/index.js';
export { guardStdin, type GuardStdinOptions } from './server/index.js';

// Errors the runtime raises (start-up, limits, a task's lifecycle); all extend TaskError.
export {
  ExecutorUnavailableError,
  InvalidCursorError,
  InvalidTransitionError,
  isTaskError,
  StoreUnavailableError,
  TaskConflictError,
  TaskError,
  TaskExpiredError,
  TaskLimitError,
  TaskNotFoundError,
  TaskTerminalError,
  TaskTooDeepError,
  TaskTooLargeError,
} from './engine/index.js';

// Durable tools, step by step (the rest of the step API is in `mcp-tasks/workflow`).
export { NonRetryableError, registerTask, withSteps } from './workflow/index.js';
export type { Step, StepConfig, WorkflowHandler, WorkflowOptions } from './workflow/index.js';
