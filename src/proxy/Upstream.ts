import { ProtocolError } from '@modelcontextprotocol/client';

import type { TaskClient } from '../client/index.js';
import { TaskConnectionError, TaskRpcError, isHttpTarget, type Tool } from '../client/index.js';
import { TASKS_EXTENSION } from '../protocol/index.js';
import { DirectHttpCall, DirectRefusedError } from './DirectHttpCall.js';
import { PASSTHROUGH, type UpstreamRequestOptions } from './passthrough.js';
import { UpstreamConnection, type UpstreamOptions } from './UpstreamConnection.js';
import { UpstreamRoutes } from './UpstreamRoutes.js';

export type { UpstreamNotification } from './UpstreamRoutes.js';
export type { UpstreamOptions } from './UpstreamConnection.js';

/**
 * The server the proxy fronts, as its calls see it: requests (a tool call to an HTTP upstream on a 2025-era session
 * the direct way, anything else through the SDK client), errors translated, the tool list cached, and what the
 * upstream supports. Its connection (restarts, sessions) is an UpstreamConnection; its questions and notifications
 * go through its routes to the call in flight and the listeners (the pool, which serves one caller per connection).
 */
export class Upstream {
  /** Where the upstream's questions and notifications go (the calls in flight, the pool). */
  readonly routes = new UpstreamRoutes();
  private readonly connection: UpstreamConnection;
  /** The tool list and the client it was read from: valid while that client is the one connected. */
  private tools: { client: TaskClient; byName: Map<string, Tool> } | undefined;
  private toolsLoading: Promise<Map<string, Tool>> | undefined;
  /** Tool calls to an HTTP upstream on a 2025-era session skip the SDK client's machinery (see DirectHttpCall). */
  private readonly direct: DirectHttpCall | undefined;
  /** What the upstream declared at the first connection; the proxy advertises the same. */
  capabilities: Record<string, unknown> = {};
  serverInfo: { name: string; version: string } | undefined;

  private constructor(private readonly options: UpstreamOptions) {
    const target = options.target;
    if (isHttpTarget(target)) this.direct = new DirectHttpCall(new URL(target.url), target.headers ?? {});
    // Registered first, so the list is forgotten before any listener hears of the change.
    this.routes.onNotification((notification) => {
      if (notification.method === 'notifications/tools/list_changed') this.tools = undefined;
    });
    this.connection = new UpstreamConnection(options, this.routes);
  }

  static async connect(options: UpstreamOptions): Promise<Upstream> {
    const upstream = new Upstream(options);
    const client = await upstream.current();
    upstream.capabilities = { ...(client.serverCapabilities as Record<string, unknown> | undefined) };
    const version = client.sdk.getServerVersion();
    if (version) upstream.serverInfo = { name: version.name, version: version.version };
    return upstream;
  }

  get isStdio(): boolean {
    return this.connection.isStdio;
  }

  get description(): string {
    return this.connection.description;
  }

  /** A connected client, waiting for a restart in progress. Throws TaskConnectionError when the upstream is down. */
  current(): Promise<TaskClient> {
    return this.connection.current();
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
            onNotification: (notification) => this.connection.notify(notification),
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

  /** The upstream's tool by name (listed once per connection, again after `notifications/tools/list_changed`). */
  async tool(name: string): Promise<Tool | undefined> {
    return (await this.toolMap()).get(name);
  }

  /** See UpstreamConnection.onSession. */
  onSession(sessionId: string | undefined): Promise<{ client: TaskClient; release(): void }> {
    return this.connection.onSession(sessionId);
  }

  async close(): Promise<void> {
    this.direct?.close();
    await this.connection.close();
  }

  private async toolMap(): Promise<Map<string, Tool>> {
    if (this.tools && this.tools.client === this.connection.connected) return this.tools.byName;
    this.toolsLoading ??= (async () => {
      const client = await this.current();
      const byName = new Map<string, Tool>();
      let cursor: string | undefined;
      // Bounded: an upstream that pages forever gets 100 pages.
      for (let page = 0; page < 100; page++) {
        const result = await this.requestOn(client, 'tools/list', cursor === undefined ? {} : { cursor });
        for (const tool of (result['tools'] as Tool[] | undefined) ?? []) byName.set(tool.name, tool);
        cursor = typeof result['nextCursor'] === 'string' ? result['nextCursor'] : undefined;
        if (cursor === undefined) break;
      }
      if (this.connection.connected === client) this.tools = { client, byName };
      return byName;
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
