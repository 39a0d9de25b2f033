import { ProtocolError } from '@modelcontextprotocol/client';

import {
  TaskClient,
  TaskConnectionError,
  TaskRpcError,
  isHttpTarget,
  type DialectPreference,
  targetKey,
  type InputContext,
  type TaskTarget,
  type Tool,
} from '../client/index.js';
import type { EngineLogger } from '../engine/index.js';
import { CORE_PROTOCOL_VERSION, TASKS_EXTENSION } from '../protocol/index.js';
import { DirectHttpCall, DirectRefusedError } from './DirectHttpCall.js';
import { PASSTHROUGH, type UpstreamRequestOptions } from './passthrough.js';
import { UpstreamRoutes, type UpstreamNotification } from './UpstreamRoutes.js';

export type { UpstreamNotification } from './UpstreamRoutes.js';

export interface UpstreamOptions {
  target: TaskTarget;
  logger: EngineLogger;
  /** Restart backoff of a stdio upstream that exited: doubles from `initialDelayMs` up to `maxDelayMs`. */
  restart?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * The tasks generation spoken to the upstream. `auto` (default) negotiates 2025-11-25 or the 2026 extension;
   * SEP-1686 has no negotiation, so an upstream that serves it is named here.
   */
  dialect?: DialectPreference;
  clientInfo?: { name: string; version: string };
}

/** A connection that lived this long before it dropped was healthy: the backoff starts over. */
const HEALTHY_MS = 10_000;

/**
 * One connection of the proxy to the server it fronts, over the project's TaskClient (so the upstream's own tasks
 * are driven in whichever generation it speaks). A stdio upstream that exits is restarted with backoff; an HTTP
 * upstream is reconnected on the next call. Questions the upstream asks are routed to the call they belong to, and
 * its notifications to the listeners (the pool, which serves one caller per connection).
 */
export class Upstream {
  private client: TaskClient | undefined;
  private connecting: Promise<TaskClient> | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private connectedAt = 0;
  private closing = false;
  private tools: Map<string, Tool> | undefined;
  private toolsLoading: Promise<Map<string, Tool>> | undefined;
  /** Where the upstream's questions and notifications go (the calls in flight, the pool). */
  readonly routes = new UpstreamRoutes();
  private readonly sessions = new Map<string, { client: Promise<TaskClient>; users: number }>();
  /** Tool calls to an HTTP upstream on a 2025-era session skip the SDK client's machinery (see DirectHttpCall). */
  private readonly direct: DirectHttpCall | undefined;
  /** What the upstream declared at the first connection; the proxy advertises the same. */
  capabilities: Record<string, unknown> = {};
  serverInfo: { name: string; version: string } | undefined;

  private constructor(private readonly options: UpstreamOptions) {
    const target = options.target;
    if (isHttpTarget(target)) this.direct = new DirectHttpCall(new URL(target.url), target.headers ?? {});
  }

  static async connect(options: UpstreamOptions): Promise<Upstream> {
    const upstream = new Upstream(options);
    const client = await upstream.open();
    upstream.capabilities = { ...(client.serverCapabilities as Record<string, unknown> | undefined) };
    const version = client.sdk.getServerVersion();
    if (version) upstream.serverInfo = { name: version.name, version: version.version };
    return upstream;
  }

  get isStdio(): boolean {
    return !isHttpTarget(this.options.target);
  }

  get description(): string {
    return targetKey(this.options.target);
  }

  /** A connected client, waiting for a restart in progress. Throws TaskConnectionError when the upstream is down. */
  async current(): Promise<TaskClient> {
    if (this.closing) throw new TaskConnectionError('The proxy is shutting down');
    if (this.client) return this.client;
    if (this.connecting) return this.connecting;
    clearTimeout(this.restartTimer);
    return this.open();
  }

  /** A JSON-RPC request to the upstream; its result comes back unchanged, a JSON-RPC error as TaskRpcError. */
  async request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    const client = await this.current();
    if (method === 'tools/call' && this.direct && client.protocolEra === 'legacy') {
      try {
        const outcome = await this.direct.request(
          method,
          params,
          { sessionId: client.sessionId, protocolVersion: client.sdk.getNegotiatedProtocolVersion() ?? '2025-11-25' },
          {
            ...(options.signal && { signal: options.signal }),
            ...(options.onProgress && { onProgress: options.onProgress }),
            onNotification: (notification) => this.notify(notification),
            // A request on the call's own stream belongs to that call, whatever else is in flight.
            onRequest: (request) => this.routes.answer(request, options.route),
          },
        );
        if (outcome.kind === 'error') throw new TaskRpcError(outcome.error);
        return outcome.result;
      } catch (error) {
        // Refused unread (an expired session, say): the SDK client's way, which knows how to recover.
        if (!(error instanceof DirectRefusedError)) throw this.translate(error, method);
      }
    }
    return this.requestOn(client, method, params, options);
  }

  async requestOn(
    client: TaskClient,
    method: string,
    params: Record<string, unknown> | undefined,
    options: UpstreamRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    try {
      return await client.sdk.request({ method, ...(params && { params }) }, PASSTHROUGH, {
        // Tool calls can take hours; the caller's signal and the tool's own timeout bound them instead.
        timeout: options.timeoutMs ?? 2_147_483_647,
        ...(options.signal && { signal: options.signal }),
        ...(options.onProgress && { onprogress: options.onProgress, resetTimeoutOnProgress: false }),
      });
    } catch (error) {
      throw this.translate(error, method);
    }
  }

  /** Whether the upstream speaks the 2026 tasks extension, where the server decides which calls become tasks. */
  async serverDirectedTasks(): Promise<boolean> {
    const client = await this.current();
    const extensions = (client.serverCapabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    return client.protocolEra === 'modern' && typeof extensions?.[TASKS_EXTENSION] === 'object';
  }

  /** SEP-1686 declares nothing per tool: any call may ask for a task, and an upstream without tasks just answers. */
  get requestorChosenTasks(): boolean {
    return this.options.dialect === 'sep-1686';
  }

  /** Lists the tools ahead of the first call (a connection made ready for a caller to come). */
  async preload(): Promise<void> {
    await this.toolMap();
  }

  /** The upstream's tool by name (listed once, again after `notifications/tools/list_changed`). */
  async tool(name: string): Promise<Tool | undefined> {
    return (await this.toolMap()).get(name);
  }

  /**
   * A client on a given upstream session, for following a task bound to it after a restart of the proxy: the
   * current connection when it is that session, else one resumed for it (released with the returned function).
   */
  async onSession(sessionId: string | undefined): Promise<{ client: TaskClient; release(): void }> {
    const current = await this.current();
    const target = this.options.target;
    if (sessionId === undefined || !isHttpTarget(target) || current.sessionId === sessionId)
      return { client: current, release() {} };
    let entry = this.sessions.get(sessionId);
    if (!entry) {
      const client = TaskClient.connect(
        { ...target, sessionId, protocolVersion: current.sdk.getNegotiatedProtocolVersion() ?? CORE_PROTOCOL_VERSION },
        this.clientOptions(),
      );
      entry = { client, users: 0 };
      this.sessions.set(sessionId, entry);
      client.catch(() => this.sessions.delete(sessionId));
    }
    entry.users++;
    const held = entry;
    const client = await held.client;
    return {
      client,
      release: () => {
        if (--held.users > 0) return;
        this.sessions.delete(sessionId);
        void client.close();
      },
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.restartTimer);
    for (const entry of this.sessions.values()) void entry.client.then((client) => client.close()).catch(() => {});
    this.sessions.clear();
    this.direct?.close();
    await this.client?.close();
    this.client = undefined;
  }

  // ---- connection ------------------------------------------------------------------------------------------------

  private open(): Promise<TaskClient> {
    const connecting = TaskClient.connect(this.options.target, this.clientOptions()).then(
      (client) => {
        this.connecting = undefined;
        if (this.closing) {
          void client.close();
          throw new TaskConnectionError('The proxy is shutting down');
        }
        this.adopt(client);
        return client;
      },
      (error: unknown) => {
        this.connecting = undefined;
        if (this.isStdio && this.client === undefined && this.connectedAt > 0) this.scheduleRestart();
        throw new TaskConnectionError(
          `The upstream server (${this.description}) failed to connect: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      },
    );
    this.connecting = connecting;
    return connecting;
  }

  private clientOptions() {
    return {
      clientInfo: this.options.clientInfo ?? { name: 'mcp-tasks-proxy', version: '0.1.0' },
      ...(this.options.dialect !== undefined && { dialect: this.options.dialect }),
      elicitation: (params: Record<string, unknown>, context: InputContext) =>
        this.routes.route('elicitation/create', params, context) as never,
      sampling: (params: Record<string, unknown>, context: InputContext) =>
        this.routes.route('sampling/createMessage', params, context) as never,
      onError: (error: Error) => this.options.logger.warn({ error: error.message }, 'upstream connection error'),
    };
  }

  private adopt(client: TaskClient): void {
    this.client = client;
    this.connectedAt = Date.now();
    this.tools = undefined;
    const sdk = client.sdk;
    sdk.fallbackNotificationHandler = async (notification) => this.notify(notification as UpstreamNotification);
    const previous = sdk.onclose;
    sdk.onclose = () => {
      previous?.();
      if (this.client !== client) return;
      this.client = undefined;
      this.tools = undefined;
      if (this.closing) return;
      this.options.logger.warn({ upstream: this.description }, 'the upstream server closed the connection');
      if (Date.now() - this.connectedAt >= HEALTHY_MS) this.failures = 0;
      if (this.isStdio) this.scheduleRestart();
    };
    // The tool set may differ after a restart: downstream clients list again.
    if (this.failures > 0 || this.restarted) {
      this.routes.broadcast({ method: 'notifications/tools/list_changed' });
    }
    this.restarted = true;
  }

  private restarted = false;

  private notify(notification: UpstreamNotification): void {
    if (notification.method === 'notifications/tools/list_changed') this.tools = undefined;
    this.routes.broadcast(notification);
  }

  /** spec-independent: a crashed stdio server is started again after 0.5 s, 1 s, 2 s … up to 30 s. */
  private scheduleRestart(): void {
    if (this.closing || this.restartTimer?.hasRef() === true) return;
    const initial = this.options.restart?.initialDelayMs ?? 500;
    const max = this.options.restart?.maxDelayMs ?? 30_000;
    const delay = Math.min(initial * 2 ** this.failures, max);
    this.failures++;
    this.options.logger.warn({ upstream: this.description, delayMs: delay }, 'restarting the upstream server');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.client || this.connecting || this.closing) return;
      this.open().catch(() => {});
    }, delay);
  }

  private async toolMap(): Promise<Map<string, Tool>> {
    if (this.tools) return this.tools;
    this.toolsLoading ??= (async () => {
      const client = await this.current();
      const tools = new Map<string, Tool>();
      let cursor: string | undefined;
      // Bounded: an upstream that pages forever gets 100 pages.
      for (let page = 0; page < 100; page++) {
        const result = await this.requestOn(client, 'tools/list', cursor === undefined ? {} : { cursor });
        for (const tool of (result['tools'] as Tool[] | undefined) ?? []) tools.set(tool.name, tool);
        cursor = typeof result['nextCursor'] === 'string' ? result['nextCursor'] : undefined;
        if (cursor === undefined) break;
      }
      if (this.client === client) this.tools = tools;
      return tools;
    })().finally(() => {
      this.toolsLoading = undefined;
    });
    return this.toolsLoading;
  }

  private translate(error: unknown, method: string): Error {
    // A JSON-RPC error from the upstream keeps its code, message and data; anything else is the connection's fault.
    if (error instanceof ProtocolError) {
      return new TaskRpcError({
        code: error.code,
        message: error.message.replace(/^MCP error -?\d+: /, ''),
        ...(error.data !== undefined && { data: error.data }),
      });
    }
    if (error instanceof TaskRpcError || error instanceof TaskConnectionError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new TaskConnectionError(`The upstream server (${this.description}) failed ${method}: ${message}`, {
      cause: error,
    });
  }
}
