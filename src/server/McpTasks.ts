import { createStore, DEFAULT_STORE } from './createStore.js';
import type { McpTasksOptions } from './McpTasksOptions.js';
import type { ServerFactory, ServerLike, TransportLike } from './ServerLike.js';
import type { TaskMetrics } from './TaskMetrics.js';
import { TaskRuntime } from './TaskRuntime.js';
import type { TaskEngine } from '../engine/index.js';

export type { McpTasksOptions, TaskSupport } from './McpTasksOptions.js';

let runtimeOfTasks: (tasks: McpTasks) => TaskRuntime;

/**
 * Adds MCP Tasks to servers built with the official SDK: attach it to a server (or wrap a factory or a transport) and
 * task-augmented calls run in the background through the engine, durable in the store. What it runs on (dialects,
 * connections, policies, limits) is its private runtime; `serveHttp` and `createTasksHttpHandler` serve it.
 */
export class McpTasks {
  readonly #runtime: TaskRuntime;

  static {
    // The package's own serving code reaches the runtime through runtimeOf; a user of the class cannot.
    runtimeOfTasks = (tasks) => tasks.#runtime;
  }

  private constructor(runtime: TaskRuntime) {
    this.#runtime = runtime;
  }

  /** Creates the runtime, opens the store and recovers tasks a previous process left running. */
  static async create(options: McpTasksOptions): Promise<McpTasks> {
    const store = typeof options.store === 'object' ? options.store : await createStore(options.store ?? DEFAULT_STORE);
    // prom-client loads only when metrics are asked for.
    const Metrics = options.metrics ? (await import('./TaskMetrics.js')).TaskMetrics : undefined;
    const runtime = new TaskRuntime(options, store, Metrics);
    await runtime.start();
    return new McpTasks(runtime);
  }

  /** The engine: create, read, cancel and list tasks directly (an operator's tools, tests). */
  get engine(): TaskEngine {
    return this.#runtime.engine;
  }

  /** The Prometheus metrics, when the `metrics` option is set. */
  get metrics(): TaskMetrics | undefined {
    return this.#runtime.metrics;
  }

  /**
   * Emits an event of an untasked type (`events.types` entry with `taskScoped: false`) from the author's code: checked
   * like a task's emit (`TaskEventRejectedError`), kept for replay (in this process, or in the store with
   * `retain.durable`) and published to the type's webhook subscriptions. `to` addresses it to one principal (its clientId, as `authenticate` names it); without it every subscriber sees it. Resolves with its `eventId`
   * (docs/events.md).
   */
  emitEvent(
    name: string,
    data: Record<string, unknown>,
    options?: { to?: string | { clientId?: string; sub?: string } },
  ): Promise<string> {
    const events = this.#runtime.events;
    if (!events) return Promise.reject(new TypeError('emitEvent needs the events option'));
    return events.emit(name, data, options);
  }

  /** Connections open now (sessions, stdio, exchanges in flight). */
  get connectionCount(): number {
    return this.#runtime.connectionCount;
  }

  /** Wraps a transport so the server connected to it speaks tasks. */
  wrapTransport(transport: TransportLike): TransportLike {
    return this.#runtime.wrapTransport(transport);
  }

  /** Makes every transport this server instance connects to speak tasks. Returns the same instance. */
  attach<S extends ServerLike>(server: S): S {
    const connect = server.connect.bind(server);
    server.connect = (transport: TransportLike) => connect(this.wrapTransport(transport));
    return server;
  }

  /** A factory whose instances are attached: for `createMcpHandler`, `serveStdio` and the HTTP helpers. */
  wrapFactory(factory: ServerFactory = this.#runtime.server): ServerFactory {
    return async (context) => this.attach(await factory(context));
  }

  /** Stops running tasks (they are recovered by the next process) and closes the store. */
  close(): Promise<void> {
    return this.#runtime.close();
  }
}

/** The runtime behind `tasks`, for this package's serving code (connections, HTTP); no entry point exports it. */
export function runtimeOf(tasks: McpTasks): TaskRuntime {
  return runtimeOfTasks(tasks);
}

/** Creates the tasks runtime (see {@link McpTasks}). */
export function createMcpTasks(options: McpTasksOptions): Promise<McpTasks> {
  return McpTasks.create(options);
}
