import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  Client,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  type ClientCapabilities,
  type ClientContext,
  type Implementation,
  type JSONRPCRequest,
  type Result,
  type ServerCapabilities,
  type Transport,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';

import { ErrorCodes, EVENTS_EXTENSION, relatedTaskId, TASKS_EXTENSION, isObject } from '../protocol/index.js';
import { ClientTaskHost } from './ClientTaskHost.js';
import { Core20251125Dialect } from './dialects/core20251125.js';
import { Ext2026Dialect } from './dialects/ext2026.js';
import { Sep1686Dialect } from './dialects/sep1686.js';
import type { TaskDialect } from './dialects/TaskDialect.js';
import type { HandleStore } from './HandleStore.js';
import { InputRouter } from './InputRouter.js';
import { RawChannel } from './RawChannel.js';
import { TaskConnectionError, TaskRpcError } from './TaskClientError.js';
import type { TaskClientOptions } from './TaskClientOptions.js';
import { createTransport, isHttpTarget, targetKey, type TaskTarget } from './TaskTarget.js';
import { honouringClient } from './retryAfter.js';
import { ToolCatalog } from './ToolCatalog.js';

/** What the session hands on to the rest of the client. */
export interface SessionHooks {
  /** A notification from the server; `true` keeps it from the SDK (progress for a call the SDK forgot). */
  onNotification(method: string, params: Record<string, unknown> | undefined): boolean;
  /** The connection closed (by either side). */
  onClose(): void;
}

interface ResumableSession {
  sessionId: string;
  protocolVersion?: string;
  capabilities?: ServerCapabilities;
}

const DEFAULT_CLIENT_INFO: Implementation = { name: 'mcp-tasks', version: '0.1.0' };

/**
 * One connection to a server: the SDK client and its transport, the era negotiation, the dialect chosen from what the
 * server advertises, and the server-to-client requests (the host's input handlers, client-hosted tasks).
 */
export class ClientSession {
  private readonly inputs: InputRouter;
  private readonly host: ClientTaskHost | undefined;
  private sdkClient!: Client;
  private transport!: Transport;
  private raw!: RawChannel;
  private catalog!: ToolCatalog;
  private active!: TaskDialect;
  private connectedTarget!: TaskTarget;
  private capabilities: ServerCapabilities | undefined;
  private closed = false;

  private constructor(
    private readonly options: TaskClientOptions,
    private readonly hooks: SessionHooks,
  ) {
    this.inputs = new InputRouter({
      ...(options.elicitation !== undefined && { elicitation: options.elicitation }),
      ...(options.sampling !== undefined && { sampling: options.sampling }),
    });
    this.host = options.hostTasks === false ? undefined : new ClientTaskHost(this.inputs);
  }

  /** Connects to a server and picks the dialect. With a store, a stored 2025-era HTTP session is resumed. */
  static async open(
    target: TaskTarget,
    options: TaskClientOptions,
    store: HandleStore | undefined,
    hooks: SessionHooks,
  ): Promise<ClientSession> {
    const session = new ClientSession(options, hooks);
    await session.connect(target, store);
    return session;
  }

  get dialect(): TaskDialect {
    return this.active;
  }

  get sdk(): Client {
    return this.sdkClient;
  }

  get tools(): ToolCatalog {
    return this.catalog;
  }

  /** The target as connected (with the session id and protocol version of a resumed session). */
  get target(): TaskTarget {
    return this.connectedTarget;
  }

  get serverCapabilities(): ServerCapabilities | undefined {
    return this.capabilities;
  }

  /** The Streamable HTTP session, when the server uses one. */
  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  get protocolVersion(): string | undefined {
    return this.sdkClient.getNegotiatedProtocolVersion();
  }

  get isOpen(): boolean {
    return !this.closed && this.raw?.isClosed !== true;
  }

  /** Whether the connection is still up (the SDK has not reported it closed). */
  get isConnected(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.host?.close();
    await this.sdkClient.close().catch(() => undefined);
  }

  private async connect(target: TaskTarget, store: HandleStore | undefined): Promise<void> {
    const session = await this.resumableSession(target, store);
    if (session !== undefined && isHttpTarget(target)) {
      try {
        await this.openClient(
          {
            ...target,
            sessionId: session.sessionId,
            ...(session.protocolVersion !== undefined && { protocolVersion: session.protocolVersion }),
          },
          session.capabilities,
        );
        // The session may have ended on the server (restart, DELETE): a ping tells.
        await this.sdkClient.ping({ timeout: this.options.connectTimeoutMs ?? 30_000 });
        return;
      } catch {
        await this.sdkClient?.close().catch(() => undefined);
      }
      const { sessionId: _gone, protocolVersion: _version, ...fresh } = target;
      await this.openClient(fresh, undefined);
      return;
    }
    await this.openClient(target, undefined);
  }

  /**
   * A 2025-era HTTP session to resume without a new handshake: the one the target names, or the newest one stored
   * for this server. Its capabilities come from the store, since no `initialize` result will be read.
   */
  private async resumableSession(
    target: TaskTarget,
    store: HandleStore | undefined,
  ): Promise<ResumableSession | undefined> {
    // Sessions belong to the 2025 era; a client pinned to the 2026 wire starts afresh.
    if (!isHttpTarget(target) || this.options.dialect === 'ext-2026') return undefined;
    if (target.sessionId === undefined && this.options.resumeStoredSession === false) return undefined;
    const key = targetKey(target);
    // Handles and the sessions a host keeps per server both know a session's capabilities.
    const records = store === undefined ? [] : [...(await store.list()), ...(await store.sessions())];
    const stored = records
      .filter((record) => record.target === key && record.sessionId !== undefined)
      .filter((record) => target.sessionId === undefined || record.sessionId === target.sessionId)
      .sort((a, b) => b.storedAt.localeCompare(a.storedAt))[0];
    const sessionId = target.sessionId ?? stored?.sessionId;
    if (sessionId === undefined) return undefined;
    const protocolVersion = target.protocolVersion ?? stored?.protocolVersion;
    return {
      sessionId,
      ...(protocolVersion !== undefined && { protocolVersion }),
      ...(stored?.serverCapabilities !== undefined && {
        capabilities: stored.serverCapabilities as ServerCapabilities,
      }),
    };
  }

  private async openClient(target: TaskTarget, restoredCapabilities: ServerCapabilities | undefined): Promise<void> {
    this.connectedTarget = target;
    const negotiation = this.negotiation(target);
    const client = new Client(this.options.clientInfo ?? DEFAULT_CLIENT_INFO, {
      capabilities: this.clientCapabilities(),
      ...(negotiation !== undefined && { versionNegotiation: negotiation }),
    });
    client.fallbackRequestHandler = (request, context) => this.serveRequest(request, context);
    client.onerror = (error) => this.options.onError?.(error);
    client.onclose = () => {
      this.closed = true;
      this.hooks.onClose();
    };
    this.sdkClient = client;
    this.transport = createTransport(target);
    this.closed = false;
    try {
      await client.connect(this.transport, { timeout: this.options.connectTimeoutMs ?? 30_000 });
    } catch (error) {
      await client.close().catch(() => undefined);
      const reason = error instanceof Error ? error.message : String(error);
      throw new TaskConnectionError(`Could not connect to ${targetKey(target)}: ${reason}`, { cause: error });
    }
    this.raw = new RawChannel(this.transport);
    this.raw.attach();
    this.capabilities = client.getServerCapabilities() ?? restoredCapabilities;
    this.catalog = new ToolCatalog(client);
    this.active = this.chooseDialect();
    this.raw.onNotification((notification) => {
      if (notification.method === 'notifications/tools/list_changed') this.catalog.invalidate();
      return this.hooks.onNotification(notification.method, notification.params as Record<string, unknown>);
    });
  }

  private negotiation(target: TaskTarget): VersionNegotiationOptions | undefined {
    const dialect = this.options.dialect ?? 'auto';
    if (dialect === 'ext-2026') return { mode: { pin: '2026-07-28' } };
    if (dialect !== 'auto') return undefined;
    const protocol = this.options.protocol ?? (isHttpTarget(target) ? 'auto' : 'legacy');
    if (protocol === 'legacy') return undefined;
    return protocol === 'auto' ? { mode: 'auto' } : { mode: { pin: protocol } };
  }

  private chooseDialect(): TaskDialect {
    const preference = this.options.dialect ?? 'auto';
    const requestTimeoutMs = this.options.requestTimeoutMs ?? 30_000;
    if (this.sdkClient.getProtocolEra() === 'modern') {
      const extension: unknown = (this.capabilities as { extensions?: Record<string, unknown> } | undefined)
        ?.extensions?.[TASKS_EXTENSION];
      return new Ext2026Dialect({
        raw: this.raw,
        envelope: (declare) => this.envelope(declare),
        advertised: isObject(extension) || preference === 'ext-2026',
        inputs: this.inputs,
        requestTimeoutMs,
        cancelByStream: this.transport.hasPerRequestStream === true,
        eventsOffered: () => this.offersEvents(),
      });
    }
    if (preference === 'sep-1686')
      return new Sep1686Dialect({ client: honouringClient(this.sdkClient), raw: this.raw, requestTimeoutMs });
    return new Core20251125Dialect({
      client: honouringClient(this.sdkClient),
      raw: this.raw,
      capabilities: this.capabilities,
      tools: this.catalog,
      requestTimeoutMs,
    });
  }

  private clientCapabilities(): ClientCapabilities {
    const tasks = this.host?.capabilities();
    return { ...this.inputs.capabilities(), ...(tasks !== undefined && { tasks }) };
  }

  /** Whether `server/discover` declared the Events extension (spec V6: no `events/*` to a server that did not). */
  offersEvents(): boolean {
    const extensions = (this.capabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    return isObject(extensions?.[EVENTS_EXTENSION]);
  }

  /** The 2026-07-28 per-request `_meta`; the extension is declared per request (spec §3.2, E1). */
  private envelope(declareTasks: boolean): Record<string, unknown> {
    return {
      [PROTOCOL_VERSION_META_KEY]: this.sdkClient.getNegotiatedProtocolVersion(),
      [CLIENT_INFO_META_KEY]: this.options.clientInfo ?? DEFAULT_CLIENT_INFO,
      [CLIENT_CAPABILITIES_META_KEY]: {
        ...this.inputs.capabilities(),
        // spec TS1: Events are declared where the server offers them, so a task's result names its event source.
        ...((declareTasks || this.offersEvents()) && {
          extensions: {
            ...(declareTasks && { [TASKS_EXTENSION]: {} }),
            ...(this.offersEvents() && { [EVENTS_EXTENSION]: {} }),
          },
        }),
      },
    };
  }

  /** Server-to-client requests: the host's handlers, and the client-hosted task methods. */
  private async serveRequest(request: JSONRPCRequest, context: ClientContext): Promise<Result> {
    const params = isObject(request.params) ? request.params : {};
    try {
      if (request.method === 'elicitation/create' || request.method === 'sampling/createMessage') {
        // spec R8: `task` is honoured only where this client declared it.
        if (this.host !== undefined && isObject(params['task']) && this.host.accepts(request.method)) {
          return this.host.create(request.method, params) as Result;
        }
        const taskId = relatedTaskId(params);
        return (await this.inputs.answer(request.method, params, {
          dialect: this.active.name,
          ...(taskId !== undefined && { taskId }),
          signal: context.mcpReq.signal,
        })) as Result;
      }
      if (request.method.startsWith('tasks/') && this.host !== undefined) {
        return (await this.host.handle(request.method, params)) as Result;
      }
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      if (error instanceof TaskRpcError) throw new ProtocolError(error.code, error.message, error.data);
      throw new ProtocolError(ErrorCodes.INTERNAL_ERROR, error instanceof Error ? error.message : String(error));
    }
    throw new ProtocolError(ErrorCodes.METHOD_NOT_FOUND, `Method not found: ${request.method}`);
  }
}
