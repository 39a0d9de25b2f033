import { randomUUID } from 'node:crypto';

import { isTerminal, type EngineLogger, type TaskEngine } from '../engine/index.js';
import {
  CORE_PROTOCOL_VERSION,
  CORE_TASK_METHODS,
  EXT_TASK_METHODS,
  PROTOCOL_VERSION_META,
  RequestCancelled,
  SEP_TASK_METHODS,
  carriesSepRelatedTask,
  declaresTasksExtension,
  TASKS_EXTENSION,
  coreCapabilities,
  parseInputRequestId,
  toCoreTask,
  withTaskSupport,
  type Caller,
  type CoreDialect,
  type DialectAnswer,
  type ExtDialect,
  type SepDialect,
  type DialectContext,
  type ToolTaskPolicy,
} from '../dialects/index.js';
import {
  isJsonRpcNotification,
  isJsonRpcRequest,
  isJsonRpcResponse,
  isObject,
  toJsonRpcError,
  type JsonRpcMessage,
  type TaskOperation,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../rpc/index.js';
import type { HeldCalls } from './HeldCalls.js';
import { withFallbackTools, type FallbackClient, type FallbackTools } from './FallbackTools.js';
import { clientKeyOf } from './clientKey.js';
import { rateClassOf, type RateClass } from './RateLimiter.js';
import { resolveCaller, type CallerOptions } from './resolveCaller.js';
import type { MessageExtraLike, TransportLike } from './ServerLike.js';

/** What a connection needs from the runtime it belongs to. */
export interface ConnectionHost {
  readonly engine: TaskEngine;
  readonly core: CoreDialect;
  readonly ext: ExtDialect;
  readonly sep: SepDialect;
  readonly defaultPollIntervalMs: number;
  readonly callerOptions: CallerOptions;
  readonly logger: EngineLogger;
  /** Plain 2026-07-28 calls of request-style tools, suspended while their client answers. */
  readonly heldCalls: HeldCalls;
  policyFor(toolName: string): ToolTaskPolicy | undefined;
  /** Throws a TaskLimitError when the owner exceeds the rate limit (spec R69). */
  checkRate(caller: Caller, kind: RateClass, taskId?: string): void;
  /** Tells the rate limit which pollInterval a caller was given for a task. */
  advertisedPollInterval(caller: Caller, taskId: string, pollIntervalMs: number): void;
  register(connection: TaskConnection): void;
  unregister(connection: TaskConnection): void;
  /** Tasks for requestors that declared no tasks support (the `fallbackTools` option). */
  readonly fallback?: FallbackTools | undefined;
}

/** `plainCall`: the handler serves a call without a task, which the task rate limit does not count. */
type Handler = ((request: JsonRpcRequest, ctx: DialectContext) => Promise<DialectAnswer>) & { plainCall?: true };

const CORE_METHODS: ReadonlySet<string> = new Set(CORE_TASK_METHODS);
const EXT_METHODS: ReadonlySet<string> = new Set(EXT_TASK_METHODS);
const SEP_METHODS: ReadonlySet<string> = new Set(SEP_TASK_METHODS);

/** A 2026-07-28 request carries its protocol version in the per-request `_meta` envelope; 2025-era ones never do. */
function isModern(request: JsonRpcRequest, extra: MessageExtraLike | undefined): boolean {
  const classification = extra?.['classification'];
  if (isObject(classification) && classification['era'] === 'modern') return true;
  const meta = isObject(request.params?.['_meta']) ? request.params['_meta'] : undefined;
  return typeof meta?.[PROTOCOL_VERSION_META] === 'string';
}

/**
 * A transport wrapper between the SDK server and its real transport: it answers the task methods and task-augmented
 * requests itself, passes everything else through, and decorates `initialize` and `tools/list` results. Because it
 * works on JSON-RPC messages, the same code serves SDK v1 and v2 servers over stdio and Streamable HTTP.
 */
export class TaskConnection implements TransportLike {
  readonly id = randomUUID();
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JsonRpcMessage, extra?: MessageExtraLike) => void) | undefined;

  private readonly handling = new Map<RequestId, AbortController>();
  private readonly tracked = new Map<
    RequestId,
    {
      method: 'initialize' | 'tools/list' | 'server/discover';
      caller: Caller;
      modern: boolean;
      fallback?: FallbackClient | undefined;
    }
  >();
  private readonly inFlightInputs = new Set<string>();
  private readonly following = new Map<string, () => void>();
  private clientCapabilities: Record<string, unknown> | undefined;
  private negotiatedVersion: string | undefined;
  private closed = false;

  constructor(
    readonly inner: TransportLike,
    private readonly host: ConnectionHost,
  ) {}

  /** Requests whose answer is still to be decorated (`initialize`, `tools/list`, `server/discover`). */
  get pendingDecorations(): number {
    return this.tracked.size;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** Streamable HTTP transports answer one request per exchange when they have no session. */
  private get longLived(): boolean {
    const inner = this.inner as unknown as Record<string, unknown>;
    return (
      this.inner.sessionId !== undefined ||
      (typeof inner['handleRequest'] !== 'function' && typeof inner['handleMessage'] !== 'function')
    );
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.inbound(message, extra);
    const previousOnclose = this.inner.onclose;
    this.inner.onclose = () => {
      previousOnclose?.();
      this.handleClose();
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    this.host.register(this);
    await this.inner.start();
  }

  async send(
    message: JsonRpcMessage,
    options?: { relatedRequestId?: RequestId; [key: string]: unknown },
  ): Promise<void> {
    await this.inner.send(this.outbound(message), options);
  }

  async close(): Promise<void> {
    await this.inner.close();
  }

  /** Sends a notification to this requestor unless the connection is gone. */
  async notify(message: JsonRpcNotification, relatedRequestId?: RequestId): Promise<void> {
    if (this.closed) return;
    await this.inner
      .send(message, relatedRequestId === undefined ? undefined : { relatedRequestId })
      .catch((error: unknown) => {
        this.host.logger.warn({ connection: this.id, error: String(error) }, 'could not send a notification');
      });
  }

  // ---- inbound ---------------------------------------------------------------------------------------------------

  private inbound(message: JsonRpcMessage, extra?: MessageExtraLike): void {
    if (isJsonRpcResponse(message)) {
      const input = parseInputRequestId(message.id);
      if (input) return void this.routeInputAnswer(input, message, extra);
      return this.onmessage?.(message, extra);
    }
    if (isJsonRpcNotification(message)) {
      if (message.method === 'notifications/cancelled' && isObject(message.params)) {
        const controller = this.handling.get(message.params['requestId'] as RequestId);
        if (controller) {
          const reason = message.params['reason'];
          return controller.abort(new RequestCancelled(typeof reason === 'string' ? reason : undefined));
        }
      }
      return this.onmessage?.(message, extra);
    }
    if (!isJsonRpcRequest(message)) return this.onmessage?.(message, extra);

    const modern = isModern(message, extra);
    if (message.method === 'initialize') {
      const params = isObject(message.params) ? message.params : {};
      this.clientCapabilities = isObject(params['capabilities']) ? params['capabilities'] : undefined;
      this.tracked.set(message.id, { method: 'initialize', caller: this.callerFor(extra), modern });
    } else if (message.method === 'tools/list' || message.method === 'server/discover') {
      const fallback = this.fallbackClient(message, modern);
      this.tracked.set(message.id, { method: message.method, caller: this.callerFor(extra), modern, fallback });
    }
    const handler =
      this.routeFallback(message, modern) ?? (modern ? this.routeModern(message) : this.route(message, extra));
    if (handler) return this.answer(message, extra, handler);
    this.onmessage?.(modern ? withoutLegacyTask(message) : message, extra);
  }

  /**
   * Which of our handlers answers a 2025-era request, decided synchronously so message order is kept otherwise.
   * The classification table is in docs/generations.md.
   */
  private route(request: JsonRpcRequest, extra: MessageExtraLike | undefined): Handler | undefined {
    const { sep } = this.host;
    const policyFor = (name: string) => this.host.policyFor(name);
    if (sep.claimsRequest(request, this.callerFor(extra), policyFor)) return (r, ctx) => sep.createTask(r, ctx);
    if (SEP_METHODS.has(request.method) && (request.method === 'tasks/delete' || this.speaksSep1686(request))) {
      return (r, ctx) => sep.tasksMethod(r, ctx);
    }
    return this.routeCore(request);
  }

  /**
   * SEP-1686 task requests carry its related-task key (spec 4.7); on a connection that negotiated a protocol older
   * than 2025-11-25, where core tasks do not exist, every task request is SEP-1686.
   */
  private speaksSep1686(request: JsonRpcRequest): boolean {
    if (carriesSepRelatedTask(isObject(request.params) ? request.params : undefined)) return true;
    return this.negotiatedVersion !== undefined && this.negotiatedVersion < CORE_PROTOCOL_VERSION;
  }

  /** A requestor without tasks support, when fallback tools are on: what it can do. */
  private fallbackClient(request: JsonRpcRequest, modern: boolean): FallbackClient | undefined {
    if (!this.host.fallback) return undefined;
    const params = isObject(request.params) ? request.params : undefined;
    if (modern) return declaresTasksExtension(params) ? undefined : { canElicit: false };
    if (isObject(this.clientCapabilities?.['tasks']) || params?.['task'] !== undefined) return undefined;
    return { canElicit: this.longLived && isObject(this.clientCapabilities?.['elicitation']) };
  }

  private routeFallback(request: JsonRpcRequest, modern: boolean): Handler | undefined {
    const fallback = this.host.fallback;
    if (!fallback || request.method !== 'tools/call' || carriesSepRelatedTask(request.params)) return undefined;
    const client = this.fallbackClient(request, modern);
    if (!client || !fallback.claims(request, (name) => this.host.policyFor(name))) return undefined;
    return (r, ctx) => fallback.handle(r, ctx, client);
  }

  private routeCore(request: JsonRpcRequest): Handler | undefined {
    const core = this.host.core;
    if (request.method === 'tools/call' && core.claimsToolsCall(request, (name) => this.host.policyFor(name))) {
      return (r, ctx) => core.toolsCall(r, ctx);
    }
    if (CORE_METHODS.has(request.method)) return (r, ctx) => core.tasksMethod(r, ctx);
    return undefined;
  }

  /**
   * 2026-07-28 requests: the extension's methods and server-directed task creation. `tasks/result` and `tasks/list`
   * do not exist on this wire; they reach the SDK server, which answers -32601.
   */
  private routeModern(request: JsonRpcRequest): Handler | undefined {
    const ext = this.host.ext;
    if (request.method === 'tools/call' && ext.claimsToolsCall(request, (name) => this.host.policyFor(name))) {
      return (r, ctx) => ext.toolsCall(r, ctx);
    }
    if (EXT_METHODS.has(request.method)) return (r, ctx) => ext.tasksMethod(r, ctx);
    const held = this.host.heldCalls;
    if (request.method === 'tools/call' && held.claims(request, (name) => this.host.policyFor(name))) {
      return Object.assign((r: JsonRpcRequest, ctx: DialectContext) => held.toolsCall(r, ctx), {
        plainCall: true as const,
      });
    }
    return undefined;
  }

  private answer(request: JsonRpcRequest, extra: MessageExtraLike | undefined, handler: Handler): void {
    const controller = new AbortController();
    this.handling.set(request.id, controller);
    const reply = (response: JsonRpcResponse) =>
      this.closed || controller.signal.aborted
        ? undefined
        : this.inner.send(response, { relatedRequestId: request.id });
    const kind = rateClassOf(request.method);
    const taskId = isObject(request.params) ? request.params['taskId'] : undefined;
    const run = async (): Promise<DialectAnswer> => {
      const ctx = this.contextFor(request, extra, controller.signal);
      if (!handler.plainCall) this.host.checkRate(ctx.caller, kind, typeof taskId === 'string' ? taskId : undefined);
      const answer = await handler(request, ctx);
      const interval = kind === 'poll' && 'result' in answer ? advertisedInterval(answer.result) : undefined;
      if (interval !== undefined && typeof taskId === 'string')
        this.host.advertisedPollInterval(ctx.caller, taskId, interval);
      return answer;
    };
    run()
      .catch((error: unknown): DialectAnswer => ({ error: toJsonRpcError(error, operationOf(request.method)) }))
      .then((answer) =>
        'noResponse' in answer ? undefined : reply({ jsonrpc: '2.0', id: request.id, ...answer } as JsonRpcResponse),
      )
      .catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))))
      .finally(() => this.handling.delete(request.id));
  }

  private contextFor(
    request: JsonRpcRequest,
    extra: MessageExtraLike | undefined,
    signal: AbortSignal,
  ): DialectContext {
    return {
      engine: this.host.engine,
      caller: this.callerFor(extra),
      policyFor: (name) => this.host.policyFor(name),
      defaultPollIntervalMs: this.host.defaultPollIntervalMs,
      signal,
      connectionId: this.id,
      clientCapabilities: this.clientCapabilities,
      inFlightInputs: this.inFlightInputs,
      onTaskCreated: (taskId) => this.follow(taskId),
      outbound: {
        relatedRequest: (message) => this.inner.send(message, { relatedRequestId: request.id }),
        relatedNotification: (message) => this.notify(message, request.id),
        notification: (message) => this.notify(message),
      },
    };
  }

  private callerFor(extra: MessageExtraLike | undefined): Caller {
    return resolveCaller(
      extra?.authInfo,
      this.longLived ? (this.inner.sessionId ?? this.id) : undefined,
      this.host.callerOptions,
      clientKeyOf(extra?.['request']),
    );
  }

  /** An answer to an input request a task sent: recorded on the task, whichever connection carried it. */
  private async routeInputAnswer(
    input: { taskId: string; key: string },
    response: JsonRpcResponse,
    extra?: MessageExtraLike,
  ): Promise<void> {
    const answer = 'error' in response ? { error: response.error } : { result: response.result };
    try {
      await this.host.engine.answerInput(this.callerFor(extra).scope, input.taskId, { [input.key]: answer });
    } catch (error) {
      this.host.logger.warn(
        { taskId: input.taskId, error: String(error) },
        'dropped an answer for an unknown or finished task',
      );
    }
  }

  // ---- outbound --------------------------------------------------------------------------------------------------

  private outbound(message: JsonRpcMessage): JsonRpcMessage {
    if (!isJsonRpcResponse(message) || message.id === null) return message;
    const tracked = this.tracked.get(message.id);
    if (!tracked) return message;
    // An error answer ends the request too: its entry goes, or every failed request would leave one behind.
    this.tracked.delete(message.id);
    if (!('result' in message)) return message;
    if (tracked.method === 'server/discover') {
      // The extension is advertised on the 2026-07-28 wire, the legacy `tasks` capability never (TASKS-SPEC §3.7).
      const capabilities = isObject(message.result['capabilities']) ? message.result['capabilities'] : {};
      const { tasks: _legacy, ...rest } = capabilities;
      const extensions = isObject(rest['extensions']) ? rest['extensions'] : {};
      return {
        ...message,
        result: { ...message.result, capabilities: { ...rest, extensions: { ...extensions, [TASKS_EXTENSION]: {} } } },
      };
    }
    if (tracked.method === 'initialize') {
      this.negotiatedVersion =
        typeof message.result['protocolVersion'] === 'string' ? message.result['protocolVersion'] : undefined;
      if (this.negotiatedVersion !== CORE_PROTOCOL_VERSION) return message;
      const capabilities = isObject(message.result['capabilities']) ? message.result['capabilities'] : {};
      // spec R1 R66
      return {
        ...message,
        result: {
          ...message.result,
          capabilities: { ...capabilities, tasks: coreCapabilities(tracked.caller.listable) },
        },
      };
    }
    const listed =
      tracked.fallback && this.host.fallback
        ? { ...message, result: withFallbackTools(message.result, this.host.fallback, tracked.fallback) }
        : message;
    // `execution.taskSupport` exists only in 2025-11-25; the extension removed it.
    if (tracked.modern || (this.negotiatedVersion !== undefined && this.negotiatedVersion !== CORE_PROTOCOL_VERSION))
      return listed;
    return { ...listed, result: withTaskSupport(listed.result, (name) => this.host.policyFor(name)?.taskSupport) };
  }

  // ---- following tasks -------------------------------------------------------------------------------------------

  /** spec R42: `notifications/tasks/status` on every status change of a task this connection created. */
  private follow(taskId: string): void {
    if (!this.longLived || this.closed) return;
    let lastStatus: string | undefined = 'working';
    const stop = this.host.engine.observe(taskId, (record) => {
      if (!record) return this.unfollow(taskId);
      if (record.status !== lastStatus) {
        lastStatus = record.status;
        // spec R44: no related-task _meta on the status notification.
        void this.notify({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: { ...toCoreTask(record) } });
      }
      if (isTerminal(record.status)) this.unfollow(taskId);
    });
    this.following.set(taskId, stop);
  }

  private unfollow(taskId: string): void {
    this.following.get(taskId)?.();
    this.following.delete(taskId);
  }

  private handleClose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const controller of this.handling.values()) controller.abort(new Error('connection closed'));
    for (const taskId of [...this.following.keys()]) this.unfollow(taskId);
    this.host.unregister(this);
    this.onclose?.();
  }
}

/** The legacy `params.task` must be ignored on the 2026-07-28 wire, so it never reaches the SDK server there. */
function withoutLegacyTask(request: JsonRpcRequest): JsonRpcRequest {
  if (request.method !== 'tools/call' || !isObject(request.params) || !('task' in request.params)) return request;
  const { task: _task, ...params } = request.params;
  return { ...request, params };
}

/** The pollInterval an answer to tasks/get advertised, under each generation's name for it. */
function advertisedInterval(result: unknown): number | undefined {
  if (!isObject(result)) return undefined;
  const value = result['pollInterval'] ?? result['pollIntervalMs'] ?? result['pollFrequency'];
  return typeof value === 'number' ? value : undefined;
}

/** What a refused request was trying to do, so the error reads right (a rate refusal of a creation, say). */
function operationOf(method: string): TaskOperation {
  const operation = OPERATIONS[method];
  if (operation) return operation;
  return method.startsWith('tasks/') ? 'retrieve' : 'create';
}

const OPERATIONS: Record<string, TaskOperation> = {
  'tasks/cancel': 'cancel',
  'tasks/update': 'update',
  'tasks/delete': 'delete',
  'tasks/list': 'list',
};
