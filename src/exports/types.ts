// `mcp-tasks/types`: the types the root's signatures name that a server author seldom writes out — the shapes of the
// official SDK the runtime accepts (servers, transports, their JSON-RPC messages), and the pieces of its options and
// handles (work hooks, held calls, rate buckets, HTTP guards, the console, the metrics). Types only: importing it
// loads nothing.

// The SDK's shapes, as both SDK generations satisfy them.
export type {
  AuthInfoLike,
  MessageExtraLike,
  ServerFactoryContext,
  ServerLike,
  TransportLike,
} from '../server/index.js';
export type {
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcResultResponse,
  RequestId,
} from '../rpc/index.js';

// Pieces of McpTasksOptions, ServeHttpOptions and TasksHttpHandlerOptions.
export type { BucketShape, HeldCallLimits, TaskWorkHooks } from '../server/index.js';
export type { ProtectedResourceOptions, RequestGuardOptions } from '../server/index.js';
export type { ConsoleAuditRecord, ConsoleOptions, TaskConsole } from '../console/index.js';
// The runtime's `metrics` (prom-client loads only when the `metrics` option asks for it).
export type { TaskMetrics, TaskMetricsOptions } from '../server/index.js';
