import type { EngineLogger, TaskEngine, TaskRecord } from '../../engine/index.js';
import type {
  Caller,
  Answerer,
  Decoration,
  DialectAnswer,
  DialectContext,
  ServerDialect,
  SessionView,
  ToolTaskPolicy,
} from '../../dialects/index.js';
import {
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
import { rateClassOf, type RateClass } from '../limits/RateLimiter.js';
import { resolveCaller, type CallerOptions } from '../limits/resolveCaller.js';
import type { MessageExtraLike } from '../ServerLike.js';
import { ConnectionSessionView, type SettledSession } from './ConnectionSessionView.js';
import { LazyAbort } from './LazyAbort.js';
import { RequestContext } from './RequestContext.js';
import type { RequestStream, StreamRoutes } from './StreamRoutes.js';
import { traceRequest } from './traceRequest.js';

/** What routing needs of the runtime a connection belongs to. */
export interface RoutingHost {
  readonly engine: TaskEngine;
  /** Who answers requests, asked in this order; the first with an answerer answers (docs/generations.md's table). */
  readonly dialects: readonly ServerDialect[];
  readonly defaultPollIntervalMs: number;
  readonly callerOptions: CallerOptions;
  readonly logger: EngineLogger;
  policyFor(toolName: string): ToolTaskPolicy | undefined;
  /** Throws a TaskLimitError when the owner exceeds the rate limit (spec R69). */
  checkRate(caller: Caller, kind: RateClass, taskId?: string): void;
  /** Tells the rate limit which pollInterval a caller was given for a task. */
  advertisedPollInterval(caller: Caller, taskId: string, pollIntervalMs: number): void;
}

/** What routing needs of its connection. */
export interface RoutedConnection {
  readonly id: string;
  sessionId(): string | undefined;
  closed(): boolean;
  isLongLived(): boolean;
  /** Hands a request no dialect answers to the SDK server. */
  deliver(request: JsonRpcRequest, extra: MessageExtraLike | undefined): void;
  onTaskCreated(record: TaskRecord): void;
  notify(message: JsonRpcNotification): Promise<void>;
  notifyOn(stream: RequestStream, message: JsonRpcNotification): Promise<void>;
  fail(error: Error): void;
}

/**
 * The road a request came by. The transport's always routes it; the fast path's may be declined, and then the
 * request takes the transport's way (`forward` gives what the transport would pass along to the SDK server).
 */
export type Road =
  | { readonly via: 'transport'; readonly stream: RequestStream }
  | { readonly via: 'fast'; readonly stream: RequestStream; readonly forward: (() => MessageExtraLike) | undefined };

/** A 2026-07-28 request carries its protocol version in the per-request `_meta` envelope; 2025-era ones never do. */
function isModern(request: JsonRpcRequest, extra: MessageExtraLike | undefined): boolean {
  const classification = extra?.['classification'];
  if (isObject(classification) && classification['era'] === 'modern') return true;
  const meta = isObject(request.params?.['_meta']) ? request.params['_meta'] : undefined;
  return typeof meta?.[PROTOCOL_VERSION_META] === 'string';
}

/**
 * Who answers each request of one connection, whichever road it came by: the session view, the dialects'
 * decorations, the first dialect's answerer, then its answer or the SDK server.
 *
 * Method families plug in through the host's `dialects` list and nowhere else: a new one (the Events extension's
 * `events/*`, say) is one more `ServerDialect` in that list (built by the runtime), whose `answererFor` takes its
 * methods, `decorate` adds its capability to `initialize` / `server/discover`, and `forward` hides what its wire
 * ignores. Both roads call `route`, so it serves the SDK transport and the HTTP fast path alike.
 */
export class RequestRouter {
  private readonly handling = new Map<RequestId, LazyAbort>();
  /** Requests the SDK server answers whose answer is to be changed on its way out. */
  private readonly tracked = new Map<RequestId, { initialize: boolean; decorations: Decoration[] }>();
  private readonly inFlightInputs = new Set<string>();
  /** What the session's `initialize` settled: the requestor's capabilities and the protocol version. */
  private readonly session: SettledSession = {};
  /** Handed to each request's views (made once, not per request). */
  private readonly policyFor = (name: string): ToolTaskPolicy | undefined => this.host.policyFor(name);
  private readonly isLongLived = (): boolean => this.connection.isLongLived();
  private readonly onTaskCreated = (record: TaskRecord): void => this.connection.onTaskCreated(record);

  constructor(
    private readonly host: RoutingHost,
    private readonly connection: RoutedConnection,
    private readonly streams: StreamRoutes,
  ) {}

  /** Requests whose answer is still to be decorated (`initialize`, `tools/list`, `server/discover`). */
  get pendingDecorations(): number {
    return this.tracked.size;
  }

  /**
   * Routes `request`: a dialect's answerer answers it on `road.stream`, or the SDK server gets it. False, with nothing
   * done, only for a fast-path request that must take the transport's way: `initialize`, an answered request whose
   * answer would be decorated, one no dialect answers without `forward`, and an id already in flight here.
   */
  route(request: JsonRpcRequest, extra: MessageExtraLike | undefined, road: Road): boolean {
    const fast = road.via === 'fast';
    if (fast && (this.connection.closed() || request.method === 'initialize')) return false;
    if (request.method === 'initialize') {
      const params = isObject(request.params) ? request.params : {};
      this.session.clientCapabilities = isObject(params['capabilities']) ? params['capabilities'] : undefined;
    }
    const session = this.sessionFor(request, extra);
    const decorations = this.host.dialects.flatMap((dialect) => dialect.decorate?.(request, session) ?? []);
    const answerer = this.answererOf(request, session);
    if (answerer) {
      if (fast && decorations.length > 0) return false;
      this.answer(request, session.caller, answerer, extra, road.stream);
      return true;
    }
    if (fast && (!road.forward || this.streams.onStream(request.id) || this.handling.has(request.id))) return false;
    if (request.method === 'initialize' || decorations.length > 0) {
      this.tracked.set(request.id, { initialize: request.method === 'initialize', decorations });
    }
    this.streams.passOn(request.id, fast ? road.stream : undefined);
    const forwarded = this.host.dialects.reduce(
      (message, dialect) => dialect.forward?.(message, session) ?? message,
      request,
    );
    this.connection.deliver(forwarded, fast && road.forward ? road.forward() : extra);
    return true;
  }

  /** The requestor cancelled a request a dialect is answering. */
  cancel(requestId: RequestId, reason: Error): boolean {
    const controller = this.handling.get(requestId);
    controller?.abort(reason);
    return controller !== undefined;
  }

  abortAll(reason: Error): void {
    for (const controller of this.handling.values()) controller.abort(reason);
  }

  /** The SDK server's answer as it leaves, with the decorations fixed when its request arrived. */
  decorated(message: JsonRpcMessage): JsonRpcMessage {
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

  /** An answer to an input request a task sent: recorded on the task, whichever connection carried it. */
  async routeInputAnswer(
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

  private answererOf(request: JsonRpcRequest, session: SessionView): Answerer | undefined {
    for (const dialect of this.host.dialects) {
      const answerer = dialect.answererFor(request, session);
      if (answerer) return answerer;
    }
    return undefined;
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

  private callerFor(extra: MessageExtraLike | undefined): Caller {
    return resolveCaller(
      extra?.authInfo,
      this.isLongLived() ? (this.connection.sessionId() ?? this.connection.id) : undefined,
      this.host.callerOptions,
      clientKeyOf(extra?.['request']),
    );
  }

  /** Answers a request a dialect took on; whatever it throws is mapped to a JSON-RPC error here, and only here. */
  private answer(
    request: JsonRpcRequest,
    caller: Caller,
    answerer: Answerer,
    extra: MessageExtraLike | undefined,
    stream: RequestStream,
  ): void {
    const controller = new LazyAbort();
    this.handling.set(request.id, controller);
    const reply = (response: JsonRpcResponse) =>
      this.connection.closed() || controller.aborted ? undefined : stream(response);
    const kind = rateClassOf(request.method);
    const param = isObject(request.params) ? request.params['taskId'] : undefined;
    const taskId = typeof param === 'string' ? param : undefined;
    const run = async (): Promise<DialectAnswer> => {
      const ctx = this.contextFor(stream, caller, controller, (interval) => {
        if (kind === 'poll' && interval !== undefined && taskId !== undefined)
          this.host.advertisedPollInterval(caller, taskId, interval);
      });
      if (!answerer.plainCall) this.host.checkRate(caller, kind, taskId);
      return answerer.answer(request, ctx);
    };
    const traced = () => traceRequest(request, extra, this.connection.sessionId(), run);
    traced()
      .catch((error: unknown): DialectAnswer => ({ error: toJsonRpcError(error, answerer.operation) }))
      .then((answer) =>
        'noResponse' in answer ? undefined : reply({ jsonrpc: '2.0', id: request.id, ...answer } as JsonRpcResponse),
      )
      .catch((error: unknown) => this.connection.fail(error instanceof Error ? error : new Error(String(error))))
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
      connectionId: this.connection.id,
      clientCapabilities: this.session.clientCapabilities,
      inFlightInputs: this.inFlightInputs,
      onTaskCreated: this.onTaskCreated,
      advertisePollInterval,
      outbound: {
        relatedRequest: (message) => stream(message),
        relatedNotification: (message) => this.connection.notifyOn(stream, message),
        notification: (message) => this.connection.notify(message),
      },
    });
  }
}
