import { randomUUID } from 'node:crypto';

import type { EngineLogger, TaskEngine, TaskRecord } from '../../engine/index.js';
import {
  RequestCancelled,
  parseInputRequestId,
  pushTaskChanges,
  type Caller,
  type Claim,
  type Decoration,
  type DialectAnswer,
  type DialectContext,
  type ServerDialect,
  type SessionView,
  type TaskPushView,
  type ToolTaskPolicy,
} from '../../dialects/index.js';
import {
  isJsonRpcNotification,
  isJsonRpcRequest,
  isJsonRpcResponse,
  isObject,
  toJsonRpcError,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../../rpc/index.js';
import { PROTOCOL_VERSION_META } from '../../protocol/index.js';
import { clientKeyOf } from '../limits/clientKey.js';
import { ConnectionSessionView, type SettledSession } from './ConnectionSessionView.js';
import { LazyAbort } from './LazyAbort.js';
import { rateClassOf, type RateClass } from '../limits/RateLimiter.js';
import { RequestContext } from './RequestContext.js';
import { resolveCaller, type CallerOptions } from '../limits/resolveCaller.js';
import type { MessageExtraLike, TransportLike } from '../ServerLike.js';
import { traceRequest } from './traceRequest.js';

/** What a connection needs from the runtime it belongs to. */
export interface ConnectionHost {
  readonly engine: TaskEngine;
  /** Who answers requests, asked in this order; the first claim wins (docs/generations.md has the table). */
  readonly dialects: readonly ServerDialect[];
  /** What a connection pushes about each task it created (spec R42). */
  readonly statusPush: TaskPushView;
  readonly defaultPollIntervalMs: number;
  readonly callerOptions: CallerOptions;
  readonly logger: EngineLogger;
  policyFor(toolName: string): ToolTaskPolicy | undefined;
  /** Throws a TaskLimitError when the owner exceeds the rate limit (spec R69). */
  checkRate(caller: Caller, kind: RateClass, taskId?: string): void;
  /** Tells the rate limit which pollInterval a caller was given for a task. */
  advertisedPollInterval(caller: Caller, taskId: string, pollIntervalMs: number): void;
  register(connection: TaskConnection): void;
  unregister(connection: TaskConnection): void;
}

/** Where the messages that go with one request travel: its related requests and notifications, then its response. */
export type RequestStream = (message: JsonRpcMessage) => Promise<void>;

/** A 2026-07-28 request carries its protocol version in the per-request `_meta` envelope; 2025-era ones never do. */
function isModern(request: JsonRpcRequest, extra: MessageExtraLike | undefined): boolean {
  const classification = extra?.['classification'];
  if (isObject(classification) && classification['era'] === 'modern') return true;
  const meta = isObject(request.params?.['_meta']) ? request.params['_meta'] : undefined;
  return typeof meta?.[PROTOCOL_VERSION_META] === 'string';
}

/**
 * A transport wrapper between the SDK server and its real transport: each request is offered to the host's dialects
 * in turn, and the first that claims it answers it; everything else passes through, with the dialects' decorations
 * applied to the answer. Because it works on JSON-RPC messages, the same code serves SDK v1 and v2 servers over
 * stdio and Streamable HTTP.
 */
export class TaskConnection implements TransportLike {
  readonly id = randomUUID();
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JsonRpcMessage, extra?: MessageExtraLike) => void) | undefined;

  private readonly handling = new Map<RequestId, LazyAbort>();
  /**
   * Requests of the fast path the SDK server answers, with the stream their messages go to instead of the transport
   * (until the response; a cancelled request's entry goes with its cancellation, since it gets no response).
   */
  private readonly routed = new Map<RequestId, RequestStream>();
  /** Requests the transport delivered that the SDK server is still answering (not the fast path's: see `routed`). */
  private readonly passedOn = new Set<RequestId>();
  /** Requests the SDK server answers whose answer is to be changed on its way out. */
  private readonly tracked = new Map<RequestId, { initialize: boolean; decorations: Decoration[] }>();
  private readonly inFlightInputs = new Set<string>();
  private readonly following = new Map<string, () => void>();
  /** The protocol versions the SDK server told its transport it speaks (the `MCP-Protocol-Version` header check). */
  private supportedVersions: readonly string[] | undefined;
  /** What the session's `initialize` settled: the requestor's capabilities and the protocol version. */
  private readonly session: SettledSession = {};
  /** The connection's own functions handed to each request's views (made once, not per request). */
  private readonly policyFor = (name: string): ToolTaskPolicy | undefined => this.host.policyFor(name);
  private readonly onTaskCreated = (record: TaskRecord): void => this.follow(record);
  private readonly isLongLived = (): boolean => isLongLived(this.inner);
  private closed = false;
  /**
   * Notifications that go with no request travel on a stream the requestor opens (Streamable HTTP's GET stream):
   * `false` until it has opened one, and such notifications are dropped meanwhile, since no requestor could ever get
   * them (resuming that stream takes an event id of it). Undefined: the transport always carries them (stdio).
   */
  private standaloneHeard: boolean | undefined;

  constructor(
    readonly inner: TransportLike,
    private readonly host: ConnectionHost,
    options: { standaloneStream?: boolean } = {},
  ) {
    if (options.standaloneStream) this.standaloneHeard = false;
  }

  /** The requestor opened (or resumed) the stream that carries notifications without a request. */
  standaloneOpened(): void {
    if (this.standaloneHeard === false) this.standaloneHeard = true;
  }

  /** Requests whose answer is still to be decorated (`initialize`, `tools/list`, `server/discover`). */
  get pendingDecorations(): number {
    return this.tracked.size;
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedVersions = [...versions];
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  /** Whether the SDK server speaks `version`; undefined until it told its transport. */
  speaksVersion(version: string): boolean | undefined {
    return this.supportedVersions?.includes(version);
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
    const out = this.outbound(message);
    const response = isJsonRpcResponse(out);
    const related = options?.relatedRequestId ?? this.impliedRelation(out);
    if (this.routed.size > 0) {
      // As the transport routes them: a response by its id, anything else by the request it relates to.
      const id = response ? out.id : related;
      const stream = id === undefined || id === null ? undefined : this.routed.get(id);
      if (stream) {
        if (response) this.routed.delete(id as RequestId);
        return stream(out);
      }
    }
    if (response && out.id !== null) this.passedOn.delete(out.id);
    await this.inner.send(
      out,
      related === options?.relatedRequestId ? options : { ...options, relatedRequestId: related },
    );
  }

  /**
   * The client request a server-to-client request sent without a relation belongs to, when that can only be one: the
   * SDK's `ctx.mcpReq.elicitInput` and `requestSampling` send none, so on Streamable HTTP their question would go to
   * the stream a client opens with GET, which a client may open late (the question is then lost and the tool waits
   * until its timeout) or never. Messages sent while answering a request should relate to it (the transport spec), so
   * when the SDK server is answering exactly one request of this session, the question goes on that request's stream.
   * With several in flight it stays unrelated, as the SDK sent it. Only on this runtime's own HTTP sessions, whose
   * request streams are always SSE (a JSON-mode transport has nowhere to put a related request).
   */
  private impliedRelation(message: JsonRpcMessage): RequestId | undefined {
    if (this.standaloneHeard === undefined || !isJsonRpcRequest(message)) return undefined;
    if (this.routed.size + this.passedOn.size !== 1) return undefined;
    for (const id of this.routed.keys()) return id;
    for (const id of this.passedOn) return id;
    return undefined;
  }

  async close(): Promise<void> {
    await this.inner.close();
  }

  /** Sends a notification to this requestor unless the connection is gone. */
  async notify(message: JsonRpcNotification, relatedRequestId?: RequestId): Promise<void> {
    if (relatedRequestId === undefined && this.standaloneHeard === false) return;
    const options = relatedRequestId === undefined ? undefined : { relatedRequestId };
    await this.notifyOn((m) => this.inner.send(m, options), message);
  }

  /** A notification on one request's stream, unless the connection is gone. */
  private async notifyOn(stream: RequestStream, message: JsonRpcNotification): Promise<void> {
    if (this.closed) return;
    await stream(message).catch((error: unknown) => {
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
        const cancelled = message.params['requestId'] as RequestId;
        // The SDK server sends no response to a request it cancels.
        this.routed.delete(cancelled);
        this.passedOn.delete(cancelled);
        const controller = this.handling.get(cancelled);
        if (controller) {
          const reason = message.params['reason'];
          return controller.abort(new RequestCancelled(typeof reason === 'string' ? reason : undefined));
        }
      }
      return this.onmessage?.(message, extra);
    }
    if (!isJsonRpcRequest(message)) return this.onmessage?.(message, extra);

    if (message.method === 'initialize') {
      const params = isObject(message.params) ? message.params : {};
      this.session.clientCapabilities = isObject(params['capabilities']) ? params['capabilities'] : undefined;
    }
    const session = this.sessionFor(message, extra);
    const decorations = this.host.dialects.flatMap((dialect) => dialect.decorate?.(message, session) ?? []);
    if (message.method === 'initialize' || decorations.length > 0) {
      this.tracked.set(message.id, { initialize: message.method === 'initialize', decorations });
    }
    const claimed = this.claimOf(message, session);
    if (claimed) return this.answer(message, session.caller, claimed, extra, this.streamOf(message.id));
    this.passedOn.add(message.id);
    this.onmessage?.(this.forwarded(message, session), extra);
  }

  /** The request as the SDK server gets it, once each dialect adjusted it. */
  private forwarded(request: JsonRpcRequest, session: SessionView): JsonRpcRequest {
    return this.host.dialects.reduce((message, dialect) => dialect.forward?.(message, session) ?? message, request);
  }

  /**
   * Answers `request` on `stream` (its own response stream, not the SDK transport's) exactly as a request arriving
   * through the transport: the HTTP fast path. A request a dialect claims is answered by it (unless the SDK server's
   * answer would be decorated); with `forward`, one no dialect claims goes to the SDK server as the transport would
   * deliver it (with the extra `forward` gives, what the transport passes along), and whatever the server sends for it
   * (its response, notifications and requests related to it) goes to `stream`. False, with nothing done, for anything
   * else, and for an id already in flight here: the request then takes the transport's way.
   */
  offer(
    request: JsonRpcRequest,
    extra: MessageExtraLike,
    stream: RequestStream,
    forward?: () => MessageExtraLike,
  ): boolean {
    if (this.closed || request.method === 'initialize') return false;
    const session = this.sessionFor(request, extra);
    const decorations = this.host.dialects.flatMap((dialect) => dialect.decorate?.(request, session) ?? []);
    const claimed = this.claimOf(request, session);
    if (claimed) {
      if (decorations.length > 0) return false;
      this.answer(request, session.caller, claimed, extra, stream);
      return true;
    }
    if (!forward || this.routed.has(request.id) || this.handling.has(request.id)) return false;
    if (decorations.length > 0) this.tracked.set(request.id, { initialize: false, decorations });
    this.routed.set(request.id, stream);
    this.onmessage?.(this.forwarded(request, session), forward());
    return true;
  }

  private claimOf(request: JsonRpcRequest, session: SessionView): Claim | undefined {
    for (const dialect of this.host.dialects) {
      const claim = dialect.claim(request, session);
      if (claim) return claim;
    }
    return undefined;
  }

  /** What goes with a request the transport delivered travels on its stream there (on HTTP: its SSE response). */
  private streamOf(requestId: RequestId): RequestStream {
    return (message) => this.inner.send(message, { relatedRequestId: requestId });
  }

  /** The request's era and caller, and a live view of what the session has settled so far. */
  private sessionFor(request: JsonRpcRequest, extra: MessageExtraLike | undefined): SessionView {
    return new ConnectionSessionView(
      isModern(request, extra),
      this.callerFor(extra),
      this.session,
      this.isLongLived,
      this.policyFor,
    );
  }

  /** Answers a claimed request; whatever the dialect throws is mapped to a JSON-RPC error here, and only here. */
  private answer(
    request: JsonRpcRequest,
    caller: Caller,
    claim: Claim,
    extra: MessageExtraLike | undefined,
    stream: RequestStream,
  ): void {
    const controller = new LazyAbort();
    this.handling.set(request.id, controller);
    const reply = (response: JsonRpcResponse) => (this.closed || controller.aborted ? undefined : stream(response));
    const kind = rateClassOf(request.method);
    const param = isObject(request.params) ? request.params['taskId'] : undefined;
    const taskId = typeof param === 'string' ? param : undefined;
    const run = async (): Promise<DialectAnswer> => {
      const ctx = this.contextFor(stream, caller, controller, (interval) => {
        if (kind === 'poll' && interval !== undefined && taskId !== undefined)
          this.host.advertisedPollInterval(caller, taskId, interval);
      });
      if (!claim.plainCall) this.host.checkRate(caller, kind, taskId);
      return claim.answer(request, ctx);
    };
    const traced = () => traceRequest(request, extra, this.sessionId, run);
    traced()
      .catch((error: unknown): DialectAnswer => ({ error: toJsonRpcError(error, claim.operation) }))
      .then((answer) =>
        'noResponse' in answer ? undefined : reply({ jsonrpc: '2.0', id: request.id, ...answer } as JsonRpcResponse),
      )
      .catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))))
      .finally(() => this.handling.delete(request.id));
  }

  private contextFor(
    stream: RequestStream,
    caller: Caller,
    abort: LazyAbort,
    advertisePollInterval: DialectContext['advertisePollInterval'],
  ): DialectContext {
    return new RequestContext(abort, {
      engine: this.host.engine,
      caller,
      policyFor: this.policyFor,
      defaultPollIntervalMs: this.host.defaultPollIntervalMs,
      connectionId: this.id,
      clientCapabilities: this.session.clientCapabilities,
      inFlightInputs: this.inFlightInputs,
      onTaskCreated: this.onTaskCreated,
      advertisePollInterval,
      outbound: {
        relatedRequest: (message) => stream(message),
        relatedNotification: (message) => this.notifyOn(stream, message),
        notification: (message) => this.notify(message),
      },
    });
  }

  private callerFor(extra: MessageExtraLike | undefined): Caller {
    return resolveCaller(
      extra?.authInfo,
      this.isLongLived() ? (this.inner.sessionId ?? this.id) : undefined,
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
    if (tracked.initialize) {
      const version = message.result['protocolVersion'];
      this.session.negotiatedVersion = typeof version === 'string' ? version : undefined;
    }
    if (tracked.decorations.length === 0) return message;
    return { ...message, result: tracked.decorations.reduce((result, decorate) => decorate(result), message.result) };
  }

  // ---- following tasks -------------------------------------------------------------------------------------------

  /** spec R42: the host's status push for every task this connection created, until it ends or the connection does. */
  private follow(record: TaskRecord): void {
    if (!this.isLongLived() || this.closed) return;
    const { taskId } = record;
    const push = this.host.statusPush;
    const stop = pushTaskChanges(
      this.host.engine,
      taskId,
      push,
      (method, params) => void this.notify({ jsonrpc: '2.0', method, params }),
      {
        lastKey: push.key(record),
        onEnd: () => this.following.delete(taskId),
        listening: () => this.standaloneHeard !== false,
      },
    );
    this.following.set(taskId, stop);
  }

  private handleClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.routed.clear();
    this.passedOn.clear();
    for (const controller of this.handling.values()) controller.abort(new Error('connection closed'));
    for (const stop of this.following.values()) stop();
    this.following.clear();
    this.host.unregister(this);
    this.onclose?.();
  }
}

/** Streamable HTTP transports answer one request per exchange when they have no session. */
function isLongLived(transport: TransportLike): boolean {
  const methods = transport as unknown as Record<string, unknown>;
  return (
    transport.sessionId !== undefined ||
    (typeof methods['handleRequest'] !== 'function' && typeof methods['handleMessage'] !== 'function')
  );
}
