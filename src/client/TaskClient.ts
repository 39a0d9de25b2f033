import { randomUUID } from 'node:crypto';

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
  type Tool,
  type Transport,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';

import { ClientTaskHost } from './ClientTaskHost.js';
import type { DialectName, DialectPreference } from './DialectName.js';
import { Core20251125Dialect } from './dialects/core20251125.js';
import { Ext2026Dialect, TASKS_EXTENSION } from './dialects/ext2026.js';
import { Sep1686Dialect } from './dialects/sep1686.js';
import type { CallMode, TaskDialect } from './dialects/TaskDialect.js';
import { HandleStore, type StoredHandle } from './HandleStore.js';
import { InputRouter, relatedTaskId, type ElicitationHandler, type SamplingHandler } from './InputRouter.js';
import { PollSchedule, type PollPolicy } from './PollSchedule.js';
import { RawChannel } from './RawChannel.js';
import type { TaskClientError } from './TaskClientError.js';
import { TaskConnectionError, TaskNotFoundError, TaskNotSupportedError, TaskRpcError } from './TaskClientError.js';
import { TaskHandle, type HandleContext } from './TaskHandle.js';
import type { TaskOutcome } from './TaskOutcome.js';
import type { TaskProgress, TaskSnapshot } from './TaskSnapshot.js';
import { createTransport, describeTarget, isHttpTarget, targetKey, type TaskTarget } from './TaskTarget.js';
import { honouringClient } from './retryAfter.js';
import { toTaskClientError } from './toTaskClientError.js';
import { ToolCatalog } from './ToolCatalog.js';

export interface TaskClientOptions {
  /** `clientInfo` sent to the server. */
  clientInfo?: Implementation;
  /** Which generation to speak; `auto` picks from what the server advertises. */
  dialect?: DialectPreference;
  /**
   * Protocol era negotiation when `dialect` is `auto`: `legacy` (2025 `initialize`), `auto` (probe with
   * `server/discover`, fall back to `initialize`) or a pin. Default: `auto` over HTTP, `legacy` over stdio, where a
   * probe costs an extra server process.
   */
  protocol?: 'legacy' | 'auto' | '2026-07-28';
  /** Answers `elicitation/create`, however it arrives. Without it, elicitation is declined and not declared. */
  elicitation?: ElicitationHandler;
  /** Answers `sampling/createMessage`, however it arrives. */
  sampling?: SamplingHandler;
  /** Accept task-augmented elicitation and sampling from 2025-11-25 servers (client-hosted tasks). Default true. */
  hostTasks?: boolean;
  /** A handle store (or its file path): in-flight task ids survive a host restart, and `resume()` continues them. */
  store?: string | HandleStore;
  /**
   * Drop a stored handle once its outcome is known (default). `false` keeps it, for hosts that only watch a task
   * and leave fetching the result to a later process.
   */
  forgetSettled?: boolean;
  /** Retention to request for new tasks: `task.ttl` (2025-11-25) or `keepAlive` (SEP-1686). */
  ttlMs?: number;
  /** Backoff when the server suggests no poll interval. */
  poll?: Partial<PollPolicy>;
  /** Timeout of one short request (a single `tasks/get`, `tasks/cancel`); never applied to the task as a whole. */
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Consecutive failed polls tolerated before a handle gives up. */
  maxPollFailures?: number;
  /** Out-of-band SDK and transport errors, for logging. */
  onError?: (error: Error) => void;
}

export interface CallToolOptions {
  /** `auto` (default): a task where the server allows it; `task`: fail rather than run plainly; `plain`: never a task. */
  mode?: CallMode;
  ttlMs?: number;
  /** Start following the call at once (default). `false` leaves polling to whoever calls `outcome()` later. */
  follow?: boolean;
}

export interface TaskList {
  tasks: TaskSnapshot[];
  nextCursor?: string;
  /** `server`: the server's own listing; `store`: the handles this client stored (the extension has no tasks/list). */
  source: 'server' | 'store';
}

const DEFAULT_CLIENT_INFO: Implementation = { name: 'mcp-tasks', version: '0.1.0' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A requestor for MCP tasks over the official SDK client: finds out which generation the server speaks, runs tools
 * as tasks where allowed, and returns handles that poll, take input, cancel and survive restarts.
 */
export class TaskClient {
  private readonly inputs: InputRouter;
  private readonly host: ClientTaskHost | undefined;
  private readonly store: HandleStore | undefined;
  private readonly live = new Map<string, TaskHandle>();
  /** Progress tokens of calls in flight; progress that arrives before the handle exists waits here. */
  private readonly progress = new Map<string, { handle?: TaskHandle; last?: TaskProgress }>();
  private readonly progressTokens = new WeakMap<TaskHandle, string>();
  private handleContext!: HandleContext;
  private sdkClient!: Client;
  private transport!: Transport;
  private raw!: RawChannel;
  private tools!: ToolCatalog;
  private active!: TaskDialect;
  private target!: TaskTarget;
  private capabilities: ServerCapabilities | undefined;
  private closed = false;

  private constructor(private readonly options: TaskClientOptions) {
    this.inputs = new InputRouter({
      ...(options.elicitation !== undefined && { elicitation: options.elicitation }),
      ...(options.sampling !== undefined && { sampling: options.sampling }),
    });
    this.host = options.hostTasks === false ? undefined : new ClientTaskHost(this.inputs);
    this.store = typeof options.store === 'string' ? new HandleStore(options.store) : options.store;
  }

  /** Connects to a server and picks the dialect. With a store, a stored 2025-era HTTP session is resumed. */
  static async connect(target: TaskTarget, options: TaskClientOptions = {}): Promise<TaskClient> {
    const client = new TaskClient(options);
    await client.open(target);
    return client;
  }

  /** The generation in use; `none` when the server offers no tasks and calls run plainly. */
  get dialect(): DialectName {
    return this.active.name;
  }

  get protocolEra(): 'legacy' | 'modern' {
    return this.active.era;
  }

  get serverCapabilities(): ServerCapabilities | undefined {
    return this.capabilities;
  }

  /** The Streamable HTTP session, when the server uses one. */
  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  /** The underlying SDK client, for everything that is not about tasks. */
  get sdk(): Client {
    return this.sdkClient;
  }

  async listTools(): Promise<Tool[]> {
    return this.active.era === 'legacy' ? this.tools.list() : (await this.sdkClient.listTools()).tools;
  }

  /**
   * Calls a tool, as a task where the server allows it (a `required` tool always is); resolves once the server
   * accepted the call. A plain call resolves at once with a handle whose outcome is the answer.
   */
  async callTool(name: string, args: Record<string, unknown> = {}, options: CallToolOptions = {}): Promise<TaskHandle> {
    this.assertOpen();
    const asTask = await this.active.plan(name, options.mode ?? 'auto');
    const abort = new AbortController();
    const ttlMs = options.ttlMs ?? this.options.ttlMs;
    const progressToken = `mcp-tasks:${randomUUID()}`;
    const route: { handle?: TaskHandle; last?: TaskProgress } = {};
    this.progress.set(progressToken, route);
    let started;
    try {
      started = await this.active.start({
        name,
        arguments: args,
        asTask,
        ...(ttlMs !== undefined && { ttlMs }),
        signal: abort.signal,
        progressToken,
      });
    } catch (error) {
      this.progress.delete(progressToken);
      throw error;
    }
    const snapshot: TaskSnapshot =
      started.kind === 'task' ? started.snapshot : { status: 'working', dialect: this.active.name };
    const handle = new TaskHandle(this.handleContext, {
      toolName: name,
      snapshot,
      started,
      abort,
      ...(started.kind === 'task' && started.requestId !== undefined && { requestId: started.requestId }),
    });
    route.handle = handle;
    if (route.last !== undefined) handle.reportProgress(route.last);
    this.progressTokens.set(handle, progressToken);
    if (handle.taskId !== undefined) {
      this.live.set(handle.taskId, handle);
      await this.remember(handle);
    }
    if (options.follow !== false) void handle.outcome();
    return handle;
  }

  /**
   * A handle for an existing task id (after one `tasks/get`); throws `TaskNotFoundError` for an unknown id.
   * `follow: false` leaves polling to the first `outcome()`, `updates()` or `cancel()`.
   */
  async attach(taskId: string, options: { follow?: boolean } = {}): Promise<TaskHandle> {
    this.assertOpen();
    const existing = this.live.get(taskId);
    if (existing !== undefined) return existing;
    const record = await this.store?.get(taskId);
    const poll = await this.active.get(taskId);
    return this.adopt(poll.snapshot, record, options.follow ?? true);
  }

  /** The task's current state, from one `tasks/get`. */
  async getTask(taskId: string): Promise<TaskSnapshot> {
    this.assertOpen();
    return (await this.active.get(taskId)).snapshot;
  }

  /** The server's task list, or (where the dialect has none) the stored handles for this server with their status. */
  async listTasks(cursor?: string): Promise<TaskList> {
    this.assertOpen();
    if (this.active.list !== undefined) {
      try {
        return { ...(await this.active.list(cursor)), source: 'server' };
      } catch (error) {
        if (!(error instanceof TaskNotSupportedError) || this.store === undefined) throw error;
      }
    }
    if (this.store === undefined) {
      throw new TaskNotSupportedError(
        'tasks/list',
        `The ${this.active.name} dialect has no task listing and no handle store is set`,
      );
    }
    const tasks: TaskSnapshot[] = [];
    for (const record of await this.storedForThisServer()) {
      try {
        tasks.push((await this.active.get(record.taskId)).snapshot);
      } catch (error) {
        if (!(error instanceof TaskNotFoundError)) throw error;
      }
    }
    return { tasks, source: 'store' };
  }

  /** Cancels a task by id and settles on the server's final word (see `TaskHandle.cancel`). */
  async cancelTask(taskId: string): Promise<TaskOutcome> {
    return (await this.attach(taskId, { follow: false })).cancel();
  }

  /** SEP-1686 `tasks/delete`; other dialects have no client-side deletion. */
  async deleteTask(taskId: string): Promise<void> {
    this.assertOpen();
    if (this.active.delete === undefined) {
      throw new TaskNotSupportedError('tasks/delete', `The ${this.active.name} dialect has no tasks/delete`);
    }
    await this.active.delete(taskId);
    await this.store?.remove(taskId);
  }

  /**
   * Handles for the stored in-flight tasks of this server (same dialect and, for 2025-era HTTP, same session),
   * each followed again from where the server is now. Tasks the server no longer knows are dropped from the store.
   */
  async resume(): Promise<TaskHandle[]> {
    this.assertOpen();
    const handles: TaskHandle[] = [];
    for (const record of await this.storedForThisServer()) {
      const existing = this.live.get(record.taskId);
      if (existing !== undefined) {
        handles.push(existing);
        continue;
      }
      try {
        const poll = await this.active.get(record.taskId);
        handles.push(this.adopt(poll.snapshot, record, true));
      } catch (error) {
        if (!(error instanceof TaskNotFoundError)) throw error;
        await this.store?.remove(record.taskId);
      }
    }
    return handles;
  }

  /**
   * Closes the connection without cancelling anything: handles still being followed reject their outcome with
   * `TaskConnectionError`, and stored handles stay stored for `resume()`.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = new TaskConnectionError('The task client was closed');
    for (const handle of [...this.live.values()]) handle.abandon(closing);
    this.host?.close();
    await this.sdkClient.close().catch(() => undefined);
  }

  private async open(target: TaskTarget): Promise<void> {
    const session = await this.resumableSession(target);
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
  ): Promise<{ sessionId: string; protocolVersion?: string; capabilities?: ServerCapabilities } | undefined> {
    // Sessions belong to the 2025 era; a client pinned to the 2026 wire starts afresh.
    if (!isHttpTarget(target) || this.options.dialect === 'ext-2026') return undefined;
    const key = targetKey(target);
    const records = this.store === undefined ? [] : await this.store.list();
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
    this.target = target;
    const client = new Client(this.options.clientInfo ?? DEFAULT_CLIENT_INFO, {
      capabilities: this.clientCapabilities(),
      ...(this.negotiation(target) !== undefined && { versionNegotiation: this.negotiation(target) }),
    });
    client.fallbackRequestHandler = (request, context) => this.serveRequest(request, context);
    client.onerror = (error) => this.options.onError?.(error);
    client.onclose = () => {
      this.closed = true;
      for (const handle of this.live.values()) handle.wake();
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
    this.tools = new ToolCatalog(client);
    this.active = this.chooseDialect();
    const policy = this.options.poll ?? {};
    this.handleContext = {
      dialect: this.active,
      newSchedule: () => new PollSchedule(policy),
      maxPollFailures: this.options.maxPollFailures ?? 5,
      isConnected: () => !this.closed,
      onSettled: (handle, settlement) => this.onSettled(handle, settlement),
      onAnswered: (handle, key) => this.onAnswered(handle, key),
    };
    this.raw.onNotification((notification) => {
      if (notification.method === 'notifications/tools/list_changed') this.tools.invalidate();
      // Progress for a call of ours is ours: the SDK no longer knows the token once the task was created.
      if (notification.method === 'notifications/progress' && this.onProgress(notification.params)) return true;
      const taskId = this.active.notificationTaskId(
        notification.method,
        notification.params as Record<string, unknown>,
      );
      if (taskId !== undefined) this.live.get(taskId)?.wake();
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
      });
    }
    if (preference === 'sep-1686')
      return new Sep1686Dialect({ client: honouringClient(this.sdkClient), raw: this.raw, requestTimeoutMs });
    return new Core20251125Dialect({
      client: honouringClient(this.sdkClient),
      raw: this.raw,
      capabilities: this.capabilities,
      tools: this.tools,
      requestTimeoutMs,
    });
  }

  private clientCapabilities(): ClientCapabilities {
    const tasks = this.host?.capabilities();
    return { ...this.inputs.capabilities(), ...(tasks !== undefined && { tasks }) };
  }

  /** The 2026-07-28 per-request `_meta`; the extension is declared per request (spec §3.2, E1). */
  private envelope(declareTasks: boolean): Record<string, unknown> {
    return {
      [PROTOCOL_VERSION_META_KEY]: this.sdkClient.getNegotiatedProtocolVersion(),
      [CLIENT_INFO_META_KEY]: this.options.clientInfo ?? DEFAULT_CLIENT_INFO,
      [CLIENT_CAPABILITIES_META_KEY]: {
        ...this.inputs.capabilities(),
        ...(declareTasks && { extensions: { [TASKS_EXTENSION]: {} } }),
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
      throw new ProtocolError(-32603, error instanceof Error ? error.message : String(error));
    }
    throw new ProtocolError(-32601, `Method not found: ${request.method}`);
  }

  private adopt(snapshot: TaskSnapshot, record: StoredHandle | undefined, follow: boolean): TaskHandle {
    const handle = new TaskHandle(this.handleContext, {
      ...(record?.toolName !== undefined && { toolName: record.toolName }),
      snapshot,
      ...(record?.requestId !== undefined && { requestId: record.requestId }),
      ...(record?.answeredKeys !== undefined && { answeredKeys: record.answeredKeys }),
    });
    this.live.set(snapshot.taskId as string, handle);
    if (follow) void handle.outcome();
    return handle;
  }

  private async storedForThisServer(): Promise<StoredHandle[]> {
    if (this.store === undefined) return [];
    const key = targetKey(this.target);
    const session = this.transport.sessionId;
    return (await this.store.list()).filter(
      (record) =>
        record.target === key &&
        record.dialect === this.active.name &&
        (record.sessionId === undefined || record.sessionId === session),
    );
  }

  private async remember(handle: TaskHandle): Promise<void> {
    if (this.store === undefined || handle.taskId === undefined) return;
    const sessionId = this.active.era === 'legacy' ? this.transport.sessionId : undefined;
    const protocolVersion = this.sdkClient.getNegotiatedProtocolVersion();
    await this.store.put({
      taskId: handle.taskId,
      dialect: this.active.name,
      target: targetKey(this.target),
      endpoint: describeTarget(this.target),
      ...(handle.toolName !== undefined && { toolName: handle.toolName }),
      storedAt: new Date().toISOString(),
      ...(sessionId !== undefined && { sessionId }),
      ...(protocolVersion !== undefined && { protocolVersion }),
      ...(sessionId !== undefined && this.capabilities !== undefined && { serverCapabilities: this.capabilities }),
      ...(handle.requestId !== undefined && { requestId: handle.requestId }),
    });
  }

  private onProgress(params: Record<string, unknown> | undefined): boolean {
    const token = params?.['progressToken'];
    const route = typeof token === 'string' ? this.progress.get(token) : undefined;
    const progress = params?.['progress'];
    if (route === undefined) return typeof token === 'string' && token.startsWith('mcp-tasks:');
    if (typeof progress !== 'number') return true;
    const total = params?.['total'];
    const message = params?.['message'];
    const update: TaskProgress = {
      progress,
      ...(typeof total === 'number' && { total }),
      ...(typeof message === 'string' && { message }),
    };
    route.last = update;
    route.handle?.reportProgress(update);
    return true;
  }

  private async onSettled(
    handle: TaskHandle,
    settlement: { outcome: TaskOutcome } | { error: TaskClientError },
  ): Promise<void> {
    const token = this.progressTokens.get(handle);
    if (token !== undefined) this.progress.delete(token);
    const taskId = handle.taskId;
    if (taskId === undefined) return;
    if (this.live.get(taskId) === handle) this.live.delete(taskId);
    // A task that ended, or that the server no longer knows, is no longer in flight; a lost connection keeps it stored.
    const ended = 'outcome' in settlement && this.options.forgetSettled !== false;
    if (ended || ('error' in settlement && settlement.error instanceof TaskNotFoundError)) {
      await this.store?.remove(taskId).catch((error: unknown) => this.options.onError?.(toTaskClientError(error)));
    }
  }

  private onAnswered(handle: TaskHandle, key: string): void {
    const taskId = handle.taskId;
    if (this.store === undefined || taskId === undefined) return;
    void this.store
      .get(taskId)
      .then((record) =>
        record === undefined
          ? undefined
          : this.store?.update(taskId, { answeredKeys: [...(record.answeredKeys ?? []), key] }),
      )
      .catch((error: unknown) => this.options.onError?.(toTaskClientError(error)));
  }

  private assertOpen(): void {
    if (this.closed || this.raw?.isClosed === true) throw new TaskConnectionError('The task client is closed');
  }
}
