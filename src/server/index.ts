// The server layer's entry for the other layers (proxy, cli). The npm API is src/index.ts and src/exports/.
// Queue workers are apart (./worker/index.js) so that BullMQ loads only where it is used.
export * from './auth/index.js';
export * from './createStore.js';
export * from './work/createTaskWork.js';
export * from './fronts/FallbackTools.js';
export type { HeldCallLimits } from './fronts/HeldCalls.js';
export * from './http/serveHttp.js';
export * from './http/TasksHttpHandler.js';
export type { RequestGuardOptions } from './http/requestGuardResponse.js';
export * from './work/LegacyInternalCall.js';
export * from './McpTasks.js';
export * from './limits/RateLimiter.js';
export type { BucketShape } from './limits/TokenBuckets.js';
export * from './limits/resolveCaller.js';
export * from './ServerLike.js';
export * from './connection/TaskConnection.js';
export type { ToolTaskPolicy, Caller } from '../dialects/index.js';
export * from './stdio/guardStdin.js';
// A type only: prom-client loads when the `metrics` option asks for it.
export type { TaskMetrics, TaskMetricsOptions } from './TaskMetrics.js';
export * from './openStandaloneConsole.js';
