import type { Registry } from 'prom-client';

import type {
  EngineLimits,
  EngineLogger,
  Executor,
  TaskEngine,
  TaskEngineOptions,
  TaskStore,
  TaskWork,
} from '../engine/index.js';
import type { ToolTaskPolicy } from '../dialects/index.js';
import type { EventsOptions } from '../events/index.js';
import type { TaskWorkHooks } from './work/createTaskWork.js';
import type { HeldCallLimits } from './fronts/HeldCalls.js';
import type { RateLimit } from './limits/RateLimiter.js';
import type { ServerFactory } from './ServerLike.js';

export type TaskSupport = ToolTaskPolicy['taskSupport'];

export interface McpTasksOptions {
  /** Builds a fresh instance of your server with its tools registered; tasks run their tools on such instances. */
  server: ServerFactory;
  /**
   * Task policy per tool name; tools not named here are `forbidden` (plain calls only). A function decides per name
   * (for tool sets that change, as behind a proxy).
   */
  tools:
    Record<string, TaskSupport | ToolTaskPolicy> | ((toolName: string) => TaskSupport | ToolTaskPolicy | undefined);
  /**
   * Run each task on a fresh instance from `server` (its own MCP handshake) instead of reusing instances between
   * tasks, one call at a time each. For servers whose instances keep state of one call. Default false.
   */
  freshServerPerTask?: boolean;
  /**
   * The work of every task. Default: an internal call of the original request on an instance from `server`.
   * A proxy replaces it to forward the request elsewhere; `hooks.onProgress` reaches the requestor.
   */
  work?: (engine: TaskEngine, hooks: TaskWorkHooks) => TaskWork;
  /** A TaskStore, or a spec: a SQLite path (default `./mcp-tasks.db`), `memory`, `postgres://…`, `redis://…`. */
  store?: TaskStore | string;
  /** Runs the tasks. Default: in this process, `concurrency` at a time. */
  executor?: (engine: TaskEngine, work: TaskWork) => Executor;
  /** Tasks running at once in this process. Default 16. */
  concurrency?: number;
  /**
   * Of those, how many one owner may hold, so other owners' tasks find a free slot. Default: three quarters of
   * `concurrency`. Per-tool limits are the tool policy's `concurrency`.
   */
  maxRunningPerOwner?: number;
  /** Limits (maximum ttl, default ttl, concurrent tasks per owner, list page size). See docs/limits.md. */
  limits?: Partial<EngineLimits>;
  /** Further engine settings (lease, sweep and recovery intervals, clock, recovery policy). */
  engine?: Omit<TaskEngineOptions, 'store' | 'executor' | 'limits' | 'logger'>;
  /** Poll interval suggested to requestors when a tool declares none. Default 1000 ms. */
  defaultPollIntervalMs?: number;
  /** Without authentication, bind tasks to the session that created them instead of making the id the capability. */
  bindToSession?: boolean;
  /**
   * SEP-1686 tasks on request types besides `tools/call`, as the proposal intends (`resources/read`, `prompts/get`).
   * Default none: the task `_meta` on them is ignored and they are answered normally.
   */
  sep1686Requests?: Array<'resources/read' | 'prompts/get'>;
  /** Prometheus metrics (see TaskMetrics): `true` for a registry of their own, or the registry to add them to. */
  metrics?: boolean | { registry: Registry };
  /**
   * Plain 2026-07-28 calls (no task) of request-style tools that wait for their client's answers: how many at once
   * and for how long. See docs/limits.md.
   */
  heldCalls?: Partial<HeldCallLimits>;
  /**
   * Tasks for hosts that do not speak them (declared no tasks support): a plain call of a task-capable tool runs for
   * up to `fallbackAfterMs`, then answers with the task to follow through the added `task_*` tools. Default off.
   */
  fallbackTools?: boolean;
  /** See `fallbackTools`. Default 20 s. */
  fallbackAfterMs?: number;
  /** Quotas on task traffic per client (see RateLimit and docs/limits.md); `false` disables them. */
  rateLimit?: RateLimit | false;
  /**
   * Serve the Events extension on the 2026-07-28 wire (docs/events.md): the event types tasks emit, poll and push
   * delivery of each task's event log, webhook delivery when configured. Default off: `events/*` answers -32601.
   */
  events?: EventsOptions;
  logger?: EngineLogger;
}
