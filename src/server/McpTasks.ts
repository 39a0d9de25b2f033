import type { Registry } from 'prom-client';

import {
  TaskEngine,
  type EngineLimits,
  type EngineLogger,
  type Executor,
  type TaskEngineOptions,
  type TaskRecord,
  type TaskStore,
  type TaskWork,
} from '../engine/index.js';
import { InProcessExecutor } from '../executors/in-process/index.js';
import { journaledWork } from '../workflow/index.js';
import {
  CORE_STATUS_PUSH,
  CoreDialect,
  ExtDialect,
  SepDialect,
  type Caller,
  type ServerDialect,
  type TaskPushView,
  type ToolTaskPolicy,
} from '../dialects/index.js';
import { createStore, DEFAULT_STORE } from './createStore.js';
import { createTaskWork, type TaskWorkHooks } from './work/createTaskWork.js';
import { FallbackTools } from './fronts/FallbackTools.js';
import type { TaskMetrics } from './TaskMetrics.js';
import { HeldCalls, type HeldCallLimits } from './fronts/HeldCalls.js';
import { toolConcurrencyOf } from './toolConcurrencyOf.js';
import { INTERNAL_TRANSPORT } from './work/LegacyInternalCall.js';
import { InternalLinkPool } from './work/InternalLinkPool.js';
import { warmModernLink } from './work/ModernInternalCall.js';
import { DEFAULT_RATE_LIMIT, RateLimiter, type RateClass, type RateKey, type RateLimit } from './limits/RateLimiter.js';
import type { CallerOptions } from './limits/resolveCaller.js';
import type { ServerFactory, ServerLike, TransportLike } from './ServerLike.js';
import { ProgressRelay } from './work/ProgressRelay.js';
import { TaskConnection, type ConnectionHost } from './connection/TaskConnection.js';

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
  logger?: EngineLogger;
}

const silent: EngineLogger = { info() {}, warn() {}, error() {} };

/**
 * Adds MCP Tasks to servers built with the official SDK: attach it to a server (or wrap a factory or a transport) and
 * task-augmented calls run in the background through the engine, durable in the store.
 */
export class McpTasks implements ConnectionHost {
  readonly engine: TaskEngine;
  readonly core = new CoreDialect();
  readonly ext = new ExtDialect();
  readonly sep: SepDialect;
  readonly defaultPollIntervalMs: number;
  readonly callerOptions: CallerOptions;
  readonly logger: EngineLogger;
  readonly executor: Executor;
  /** Present when the `metrics` option is set. */
  readonly metrics: TaskMetrics | undefined;
  readonly heldCalls: HeldCalls;
  readonly fallback: FallbackTools | undefined;
  /**
   * In the order they are asked (docs/generations.md): the fallback tools, for requestors without tasks, before any
   * generation; SEP-1686 before 2025-11-25, whose requests it tells apart by their `_meta`; the 2026 extension, then
   * plain 2026-07-28 calls that wait for answers. The eras never overlap: each dialect claims in one only.
   */
  readonly dialects: readonly ServerDialect[];
  /** A connection pushes 2025-11-25 status notifications for the tasks it created (spec R42). */
  readonly statusPush: TaskPushView = CORE_STATUS_PUSH;
  private readonly policies = new Map<string, ToolTaskPolicy>();
  private readonly policyOf: ((toolName: string) => TaskSupport | ToolTaskPolicy | undefined) | undefined;
  private readonly connections = new Map<string, TaskConnection>();
  private readonly rate: RateLimiter | undefined;
  private readonly progressRelay: ProgressRelay | undefined;
  /** Instances of the author's server kept between task runs (none with `freshServerPerTask`). */
  private readonly links: InternalLinkPool | undefined;

  private constructor(
    private readonly options: McpTasksOptions,
    store: TaskStore,
    Metrics: typeof TaskMetrics | undefined,
  ) {
    this.logger = options.logger ?? silent;
    this.links = options.freshServerPerTask ? undefined : new InternalLinkPool(options.server);
    this.sep = new SepDialect({ requests: new Set(options.sep1686Requests ?? []) });
    this.defaultPollIntervalMs = options.defaultPollIntervalMs ?? 1000;
    this.fallback = options.fallbackTools
      ? new FallbackTools(this.core, {
          ...(options.fallbackAfterMs !== undefined && { afterMs: options.fallbackAfterMs }),
        })
      : undefined;
    this.callerOptions = { bindToSession: options.bindToSession ?? false };
    this.heldCalls = new HeldCalls(options.server, options.heldCalls);
    this.dialects = [...(this.fallback ? [this.fallback] : []), this.sep, this.core, this.ext, this.heldCalls];
    this.rate =
      options.rateLimit === false
        ? undefined
        : new RateLimiter(options.rateLimit ?? DEFAULT_RATE_LIMIT, this.defaultPollIntervalMs);
    if (typeof options.tools === 'function') this.policyOf = options.tools;
    else {
      for (const [name, policy] of Object.entries(options.tools)) {
        this.policies.set(name, typeof policy === 'string' ? { taskSupport: policy } : policy);
      }
    }
    this.metrics = Metrics
      ? new Metrics({
          ...(typeof options.metrics === 'object' && { registry: options.metrics.registry }),
          load: () => {
            const executor = this.executor;
            return executor instanceof InProcessExecutor
              ? { running: executor.activeCount, waiting: executor.queuedCount }
              : { running: 0, waiting: 0 };
          },
        })
      : undefined;
    this.engine = new TaskEngine({
      ...options.engine,
      store,
      logger: this.logger,
      onLifecycle: (event) => {
        options.engine?.onLifecycle?.(event);
        this.metrics?.observe(event);
        if (event.type === 'created') this.relayProgressOf(event.task);
      },
      ...(options.limits && { limits: options.limits }),
    });
    const hooks: TaskWorkHooks = { onProgress: (task, params) => this.forwardProgress(task, params) };
    // Custom work (e.g. a proxy) runs no local tools, so it needs no step journal.
    const run = options.work
      ? options.work(this.engine, hooks)
      : journaledWork(
          this.engine,
          createTaskWork(options.server, hooks, {
            ...(this.links ? { pool: this.links } : { freshServerPerTask: true }),
          }),
        );
    this.executor = options.executor
      ? options.executor(this.engine, run)
      : new InProcessExecutor({
          engine: this.engine,
          work: run,
          concurrency: options.concurrency ?? 16,
          ...(options.maxRunningPerOwner !== undefined && { maxRunningPerOwner: options.maxRunningPerOwner }),
          toolConcurrency:
            typeof options.tools === 'function'
              ? (name) => this.policyFor(name)?.concurrency
              : toolConcurrencyOf(options.tools),
        });
    this.engine.setExecutor(this.executor);
    // Work in this process sends progress directly (forwardProgress); work elsewhere stores it on the task.
    this.progressRelay =
      this.executor instanceof InProcessExecutor
        ? undefined
        : new ProgressRelay(this.engine, (task, params) => this.forwardProgress(task, params));
  }

  /** Creates the runtime, opens the store and recovers tasks a previous process left running. */
  static async create(options: McpTasksOptions): Promise<McpTasks> {
    const store = typeof options.store === 'object' ? options.store : await createStore(options.store ?? DEFAULT_STORE);
    // prom-client loads only when metrics are asked for.
    const Metrics = options.metrics ? (await import('./TaskMetrics.js')).TaskMetrics : undefined;
    const tasks = new McpTasks(options, store, Metrics);
    await tasks.engine.start();
    if ([...tasks.policies.values()].some((policy) => policy.inputStyle === 'multiRoundTrip'))
      await warmModernLink(options.server);
    return tasks;
  }

  policyFor(toolName: string): ToolTaskPolicy | undefined {
    if (!this.policyOf) return this.policies.get(toolName);
    const policy = this.policyOf(toolName);
    return typeof policy === 'string' ? { taskSupport: policy } : policy;
  }

  checkRate(caller: Caller, kind: RateClass, taskId?: string): void {
    try {
      this.rate?.take(rateKey(caller), kind, taskId);
    } catch (error) {
      this.metrics?.refusedBy('rate');
      throw error;
    }
  }

  advertisedPollInterval(caller: Caller, taskId: string, pollIntervalMs: number): void {
    this.rate?.advertised(rateKey(caller), taskId, pollIntervalMs);
  }

  /** Connections open now (sessions, stdio, exchanges in flight). */
  get connectionCount(): number {
    return this.connections.size;
  }

  register(connection: TaskConnection): void {
    this.connections.set(connection.id, connection);
  }

  unregister(connection: TaskConnection): void {
    this.connections.delete(connection.id);
    this.progressRelay?.dropConnection(connection.id);
  }

  /** Wraps a transport so the server connected to it speaks tasks. */
  wrapTransport<T extends TransportLike>(transport: T): TransportLike {
    if ((transport as Record<PropertyKey, unknown>)[INTERNAL_TRANSPORT] || transport instanceof TaskConnection)
      return transport;
    return new TaskConnection(transport, this);
  }

  /** Makes every transport this server instance connects to speak tasks. Returns the same instance. */
  attach<S extends ServerLike>(server: S): S {
    const connect = server.connect.bind(server);
    server.connect = (transport: TransportLike) => connect(this.wrapTransport(transport));
    return server;
  }

  /** A factory whose instances are attached: for `createMcpHandler`, `serveStdio` and the HTTP helpers. */
  wrapFactory(factory: ServerFactory = this.options.server): ServerFactory {
    return async (context) => this.attach(await factory(context));
  }

  /** Stops running tasks (they are recovered by the next process) and closes the store. */
  async close(): Promise<void> {
    this.heldCalls.close();
    this.progressRelay?.close();
    await this.executor.close();
    await this.engine.close();
    await this.links?.close();
  }

  /**
   * spec R55: progress keeps the requestor's original token, on the connection that created the task. False when
   * that connection is not (or no longer) in this process.
   */
  private forwardProgress(task: TaskRecord, params: Record<string, unknown>): boolean {
    const connection = this.connectionOf(task);
    if (!connection) return false;
    if (task.progressToken !== undefined && params['progressToken'] === task.progressToken) {
      void connection.notify({ jsonrpc: '2.0', method: 'notifications/progress', params });
    }
    return true;
  }

  /** Relays stored progress of a task created here with a progress token, when its work runs elsewhere. */
  private relayProgressOf(task: TaskRecord): void {
    const connection = this.connectionOf(task);
    if (this.progressRelay && connection && task.progressToken !== undefined)
      this.progressRelay.watch(task, connection.id);
  }

  private connectionOf(task: TaskRecord): TaskConnection | undefined {
    const connectionId = task.meta['connectionId'];
    return typeof connectionId === 'string' ? this.connections.get(connectionId) : undefined;
  }
}

/** Creates the tasks runtime (see {@link McpTasks}). */
export function createMcpTasks(options: McpTasksOptions): Promise<McpTasks> {
  return McpTasks.create(options);
}

function rateKey(caller: Caller): RateKey {
  return { key: caller.owner, ...(caller.quotaGroup !== undefined && { group: caller.quotaGroup }) };
}
