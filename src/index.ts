// The package root, `mcp-tasks`: what a server author needs to add tasks to an MCP server. Everything here is public
// API (semver applies); everything else is reached through a subpath (src/exports/) or is internal. The root loads
// no database driver, queue client, metrics library or the console: stores load when their spec is chosen, metrics
// and the console when configured, the queue executor and workers live in `mcp-tasks/worker`. The other errors are in
// `mcp-tasks/errors`, the step API in `mcp-tasks/workflow`, the types the options reach in `mcp-tasks/engine`.

// The runtime: add tasks to servers built with the official SDK, the per-tool policy and the options.
export { createMcpTasks, McpTasks, type McpTasksOptions, type TaskSupport } from './server/index.js';
export type { Caller, ServerFactory, ToolTaskPolicy } from './server/index.js';
export { DEFAULT_RATE_LIMIT, type RateLimit } from './server/index.js';
export { defaultRecoveryPolicy, type RecoveryPolicy } from './engine/index.js';
export type { TaskStore } from './engine/index.js';

// Serving: Streamable HTTP (a node:http server, or the fetch-style handler to mount elsewhere), bearer auth, stdio.
export { serveHttp, type HttpServerHandle, type ServeHttpOptions } from './server/index.js';
export { createTasksHttpHandler, type TasksHttpHandler, type TasksHttpHandlerOptions } from './server/index.js';
export { jwtAuth, type BearerAuth, type JwtAuthOptions } from './server/index.js';
export { guardStdin, type GuardStdinOptions } from './server/index.js';

// Every error the runtime raises extends TaskError; the classes themselves are in `mcp-tasks/errors`.
export { isTaskError, TaskError } from './engine/index.js';
