import {
  TaskEngine,
  type EngineLogger,
  type Executor,
  type TaskRecord,
  type TaskStore,
  type TaskWork,
} from '../engine/index.js';
import { InProcessExecutor } from '../executors/in-process/index.js';
import { journaledWork } from '../workflow/index.js';
import { EventsFront } from '../events/index.js';
import {
  CORE_STATUS_PUSH,
  CoreDialect,
  ExtDialect,
  readTaskMeta,
  SepDialect,
  type Caller,
  type ServerDialect,
  type TaskPushView,
  type ToolTaskPolicy,
} from '../dialects/index.js';
import { createTaskWork, type TaskWorkHooks } from './work/createTaskWork.js';
import { FallbackTools } from './fronts/FallbackTools.js';
import type { TaskMetrics } from './TaskMetrics.js';
import { HeldCalls } from './fronts/HeldCalls.js';
import { toolConcurrencyOf } from './toolConcurrencyOf.js';
import { INTERNAL_TRANSPORT } from './work/LegacyInternalCall.js';
import { InternalLinkPool } from './work/InternalLinkPool.js';
import { ModernInternalCall } from './work/ModernInternalCall.js';
import { DEFAULT_RATE_LIMIT, RateLimiter, type RateClass, type RateKey } from './limits/RateLimiter.js';
import type { CallerOptions } from './limits/resolveCaller.js';
import type { ServerFactory, TransportLike } from './ServerLike.js';
import { ProgressRelay } from './work/ProgressRelay.js';
import { TaskConnection, type ConnectionHost } from './connection/TaskConnection.js';
import type { McpTasksOptions, TaskSupport } from './McpTasksOptions.js';

const silent: EngineLogger = { info() {}, warn() {}, error() {} };

/**
 * What a `McpTasks` runs on, kept out of its public shape: the dialects in the order they are asked, the tool
 * policies, the rate limit, the connections of this process and the relay of their progress. Connections and the
 * HTTP helpers reach it through `runtimeOf(tasks)`; no entry point exports it.
 */
export class TaskRuntime implements ConnectionHost {
  readonly engine: TaskEngine;
  readonly core = new CoreDialect();
  // spec TS1: a CreateTaskResult names the task's event source when Events are served.
  readonly ext = new ExtDialect({ eventSourceFor: (record, params) => this.events?.eventSourceFor(record, params) });
  /** The Events extension (`events/*` on the 2026-07-28 wire), when the `events` option is set. */
  readonly events: EventsFront | undefined;
  private readonly stopEvents: (() => void) | undefined;
  readonly sep: SepDialect;
  readonly defaultPollIntervalMs: number;
  readonly callerOptions: CallerOptions;
  readonly logger: EngineLogger;
  readonly executor: Executor;
  /** The factory given as `server`: connections and task runs build their instances with it. */
  readonly server: ServerFactory;
  /** Present when the `metrics` option is set. */
  readonly metrics: TaskMetrics | undefined;
  readonly heldCalls: HeldCalls;
  readonly fallback: FallbackTools | undefined;
  /**
   * In the order they are asked (docs/generations.md): the fallback tools, for requestors without tasks, before any
   * generation; SEP-1686 before 2025-11-25, whose requests it tells apart by their `_meta`; the 2026 extension, then
   * plain 2026-07-28 calls that wait for answers. The eras never overlap: each dialect answers in one only.
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
  /** The author's server on the 2026-07-28 wire, for request-style tools. */
  private readonly modern: ModernInternalCall;

  constructor(options: McpTasksOptions, store: TaskStore, Metrics: typeof TaskMetrics | undefined) {
    this.server = options.server;
    this.logger = options.logger ?? silent;
    this.links = options.freshServerPerTask ? undefined : new InternalLinkPool(options.server);
    this.modern = new ModernInternalCall(options.server);
    this.sep = new SepDialect({ requests: new Set(options.sep1686Requests ?? []) });
    this.defaultPollIntervalMs = options.defaultPollIntervalMs ?? 1000;
    this.fallback = options.fallbackTools
      ? new FallbackTools(this.core, {
          ...(options.fallbackAfterMs !== undefined && { afterMs: options.fallbackAfterMs }),
        })
      : undefined;
    this.callerOptions = { bindToSession: options.bindToSession ?? false };
    this.heldCalls = new HeldCalls(options.server, options.heldCalls);
    this.events = options.events ? new EventsFront(options.events) : undefined;
    // The Events front answers only what no other dialect serves (`events/*` of the 2026-07-28 wire, `tasks/stream`)
    // and, for a test fixture, the conformance control tools, so it asks first: those tools are no task calls.
    this.dialects = [
      ...(this.events ? [this.events] : []),
      ...(this.fallback ? [this.fallback] : []),
      this.sep,
      this.core,
      this.ext,
      this.heldCalls,
    ];
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
          // An executor that runs nothing in this process (a queue) reports no load here.
          load: () => this.executor.load?.() ?? { running: 0, waiting: 0 },
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
      ...(this.events && { checkEvent: this.events.catalog.check, statusEvents: true }),
    });
    const hooks: TaskWorkHooks = { onProgress: (task, params) => this.forwardProgress(task, params) };
    // Custom work (e.g. a proxy) runs no local tools, so it needs no step journal.
    const run: TaskWork = options.work
      ? options.work(this.engine, hooks)
      : journaledWork(
          this.engine,
          createTaskWork(options.server, hooks, {
            ...(this.links ? { pool: this.links } : { freshServerPerTask: true }),
            modern: this.modern,
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
    // Events appended here (emits of in-process work, status changes) go to the webhook subscriptions too.
    this.stopEvents = this.events?.attach(this.engine, this.logger);
    if (this.metrics) this.engine.onEventAppended((_task, event) => this.metrics?.eventAppended(event));
    // An executor that leases at creation runs the task in this process, whose work sends progress directly
    // (forwardProgress); work elsewhere stores it on the task, and this process relays it.
    this.progressRelay = this.executor.leasesOnCreate
      ? undefined
      : new ProgressRelay(this.engine, (task, params) => this.forwardProgress(task, params));
  }

  /** Recovers tasks a previous process left running and prepares the links request-style tools need. */
  async start(): Promise<void> {
    await this.engine.start();
    if ([...this.policies.values()].some((policy) => policy.inputStyle === 'multiRoundTrip')) await this.modern.warm();
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
      this.engine.noteRefusal(caller.owner, 'rate');
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

  wrapTransport<T extends TransportLike>(transport: T): TransportLike {
    if ((transport as Record<PropertyKey, unknown>)[INTERNAL_TRANSPORT] || transport instanceof TaskConnection)
      return transport;
    return new TaskConnection(transport, this);
  }

  async close(): Promise<void> {
    this.heldCalls.close();
    this.progressRelay?.close();
    await this.executor.close();
    // After the executor: what its last runs append still reaches the webhooks.
    this.stopEvents?.();
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
    const { connectionId } = readTaskMeta(task);
    return connectionId === undefined ? undefined : this.connections.get(connectionId);
  }
}

function rateKey(caller: Caller): RateKey {
  return { key: caller.owner, ...(caller.quotaGroup !== undefined && { group: caller.quotaGroup }) };
}
