import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { classifyInboundRequest, isJsonContentType, isLegacyRequest } from '@modelcontextprotocol/server';

import type { Answerer, Caller, DialectAnswer, Outbound } from '../../dialects/index.js';
import { EventsMethod, MODERN_PROTOCOL_VERSION } from '../../protocol/index.js';
import {
  isObject,
  toJsonRpcError,
  validateMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../rpc/index.js';
import { ConnectionSessionView } from '../connection/ConnectionSessionView.js';
import { LazyAbort } from '../connection/LazyAbort.js';
import { RequestContext } from '../connection/RequestContext.js';
import { traceRequest } from '../connection/traceRequest.js';
import { clientKeyOf, tagClientAddress } from '../limits/clientKey.js';
import { rateClassOf } from '../limits/RateLimiter.js';
import { resolveCaller } from '../limits/resolveCaller.js';
import type { AuthInfoLike } from '../ServerLike.js';
import type { TaskRuntime } from '../TaskRuntime.js';
import { EventStreamResponse, type EventStreamIo } from './EventStreamResponse.js';
import { webRequestOf } from './fast/nodeRequest.js';
import { passesRequestGuard, type RequestGuardOptions } from './requestGuardResponse.js';

/** What this path needs of the handler it shortcuts. */
export interface NodeEventStreamsHost {
  readonly runtime: TaskRuntime;
  readonly options: RequestGuardOptions & {
    authenticate?: (
      request: Request,
    ) => Promise<AuthInfoLike | undefined | Response> | AuthInfoLike | undefined | Response;
  };
  /** The handler's own way for an authenticated request (when no dialect answers it after all). */
  serveAuthenticated(request: Request, auth: AuthInfoLike | undefined, remote: string | undefined): Promise<Response>;
}

/** serveHttp's output: its writer of web Responses, the bounds, the exchange's abort signal. */
export interface NodeEventStreamsIo extends EventStreamIo {
  readonly signal: () => AbortSignal;
}

/** The SDK's per-request transport sends a keep-alive comment this often on an SSE answer. */
const KEEP_ALIVE_MS = 15_000;
const CLOSED = new Error('connection closed');
const noop = () => {};

/**
 * `events/stream` of the 2026-07-28 wire served from node:http, its SSE written straight to node's ServerResponse.
 *
 * Why not the SDK's per-request transport, as ModernEventsPath uses (and every other request of that wire): a push
 * stream stays open for its task's life, and what that way holds for the whole of it (the web Request and its
 * abort signal, the transport with its SSE ReadableStream and keep-alive timer, the Response and its reader loop
 * into node, a TaskConnection and its router) came to some 25 KB of JS heap a stream, over the 150 MB goal for
 * 10,000 streams (docs/benchmarks.md). Here a stream holds its dialect's answer, one small writer and node's own
 * objects, and one keep-alive timer serves every stream.
 *
 * The wire is the same (EventStreamResponse), and so is what a request goes through: it is only taken when the SDK's
 * way would come to ModernEventsPath with it (the path, Host and Origin, a JSON body holding one valid request, the
 * modern revision's headers matching, not legacy), else it is declined (false, nothing written) and goes that way.
 * Then the `authenticate` hook is shown the web Request, the caller resolved from it as the router does, and the first
 * dialect claiming the request answers it, under the same trace and the one error mapping; none claiming it, the
 * handler's way answers.
 */
export class NodeEventStreams {
  /** Requests answered on this path (refusals included). */
  served = 0;
  private readonly open = new Set<EventStreamResponse>();
  private keepAlive: NodeJS.Timeout | undefined;
  /** Handed to each request's views, as a connection hands its own. */
  private readonly policyFor: ConnectionSessionView['policyFor'];

  constructor(private readonly host: NodeEventStreamsHost) {
    this.policyFor = (name) => host.runtime.policyFor(name);
  }

  /** True when the request was answered here; false when the handler's way must answer it (nothing was written). */
  async serve(
    path: string,
    req: IncomingMessage,
    res: ServerResponse,
    body: string | undefined,
    io: NodeEventStreamsIo,
  ): Promise<boolean> {
    const { runtime, options } = this.host;
    const headers = req.headers;
    if (!runtime.events || req.method !== 'POST' || headers['mcp-session-id'] !== undefined) return false;
    if (headers['mcp-method'] !== EventsMethod.stream || headers['mcp-protocol-version'] !== MODERN_PROTOCOL_VERSION)
      return false;
    if (pathOf(req.url) !== path || !passesRequestGuard(headers.host, headers.origin, options)) return false;
    if (!isJsonContentType(headers['content-type'] ?? null)) return false;
    const parsed = streamRequestOf(body);
    if (!parsed) return false;
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: MODERN_PROTOCOL_VERSION,
      mcpMethodHeader: EventsMethod.stream,
      ...(typeof headers['mcp-name'] === 'string' && { mcpNameHeader: headers['mcp-name'] }),
      body: parsed,
    });
    if (route.kind !== 'modern' || route.messageKind !== 'request') return false;
    if (route.classification.revision !== MODERN_PROTOCOL_VERSION) return false;
    // The web Request lives only while the request is checked: the hook is shown it, the caller's key read from it.
    const web = webRequestOf(req, body, io.signal);
    const remote = req.socket.remoteAddress;
    tagClientAddress(web, remote);
    if (await isLegacyRequest(web, parsed)) return false;
    const auth = await options.authenticate?.(web);
    this.served++;
    if (auth instanceof Response) {
      await io.write(auth);
      return true;
    }
    const request = route.message as JsonRpcRequest;
    const caller = resolveCaller(auth, undefined, runtime.callerOptions, clientKeyOf(web));
    const session = new ConnectionSessionView(true, caller, {}, () => false, this.policyFor);
    // As the router decides for a request of the fast road: a decorated answer, or none, is the handler's to give.
    const decorated = runtime.dialects.some((dialect) => dialect.decorate?.(request, session) !== undefined);
    const answerer = decorated ? undefined : firstAnswerer(runtime, request, session);
    if (!answerer) {
      await io.write(await this.host.serveAuthenticated(web, auth, remote));
      return true;
    }
    // Not awaited: what was read and checked above (the body, its parse, the web Request) is not kept for the stream's
    // life by this frame or serveHttp's; the answer catches its own failures.
    void this.answer(request, caller, answerer, auth, req, res, io);
    return true;
  }

  /** Ends every open stream without its answer (the handler closes). */
  close(): void {
    for (const response of this.open) response.end();
    this.open.clear();
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  /** Answers as RequestRouter answers a request a dialect took on; errors are mapped here by the one mapping. */
  private async answer(
    request: JsonRpcRequest,
    caller: Caller,
    answerer: Answerer,
    auth: AuthInfoLike | undefined,
    req: IncomingMessage,
    res: ServerResponse,
    io: EventStreamIo,
  ): Promise<void> {
    const runtime = this.host.runtime;
    const response = new EventStreamResponse(res, io);
    const abort = new LazyAbort();
    const gone = () => abort.abort(CLOSED);
    res.once('close', gone);
    this.open.add(response);
    this.keepAlive ??= setInterval(() => this.tick(), KEEP_ALIVE_MS).unref();
    const ctx = new RequestContext(abort, {
      engine: runtime.engine,
      caller,
      policyFor: this.policyFor,
      defaultPollIntervalMs: runtime.defaultPollIntervalMs,
      connectionId: randomUUID(),
      clientCapabilities: undefined,
      inFlightInputs: new Set(),
      onTaskCreated: noop,
      advertisePollInterval: noop,
      outbound: new ExchangeOutbound(response, runtime),
    });
    const run = (): Promise<DialectAnswer> => {
      if (!answerer.plainCall) runtime.checkRate(caller, rateClassOf(request.method), taskIdOf(request));
      return answerer.answer(request, ctx);
    };
    // The trace's parent from the HTTP headers, as the transport's extra would give them.
    const extra = { ...(auth && { authInfo: auth }), requestInfo: { headers: req.headers } };
    try {
      let answer: DialectAnswer;
      try {
        answer = await traceRequest(request, extra, undefined, run);
      } catch (error) {
        answer = { error: toJsonRpcError(error, answerer.operation) };
      }
      if (!('noResponse' in answer) && !abort.aborted)
        await response.send({ jsonrpc: '2.0', id: request.id, ...answer } as JsonRpcResponse);
    } catch (error) {
      runtime.logger.warn({ error: String(error) }, 'events/stream: the answer could not be written');
    } finally {
      res.off('close', gone);
      this.open.delete(response);
      response.end();
    }
  }

  /** One keep-alive comment on every open stream; the timer stops with the last stream. */
  private tick(): void {
    if (this.open.size === 0) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
      return;
    }
    for (const response of this.open) response.keepAlive();
  }
}

/**
 * Where a dialect's messages for its request go: on the request's own answer, as the per-request transport sends
 * what relates to its request; one relating to no request has nowhere to go on this wire and is dropped, as there.
 * A class rather than closures: one small object a stream.
 */
class ExchangeOutbound implements Outbound {
  constructor(
    private readonly response: EventStreamResponse,
    private readonly runtime: TaskRuntime,
  ) {}

  relatedRequest(message: JsonRpcRequest): Promise<void> {
    return this.response.send(message);
  }

  async relatedNotification(message: JsonRpcNotification): Promise<void> {
    // As a connection's notifyOn: a failed write is logged, never the dialect's failure.
    await this.response.send(message).catch((error: unknown) => {
      this.runtime.logger.warn({ error: String(error) }, 'could not send a notification');
    });
  }

  async notification(_message: JsonRpcNotification): Promise<void> {}
}

function firstAnswerer(
  runtime: TaskRuntime,
  request: JsonRpcRequest,
  session: ConnectionSessionView,
): Answerer | undefined {
  for (const dialect of runtime.dialects) {
    const answerer = dialect.answererFor(request, session);
    if (answerer) return answerer;
  }
  return undefined;
}

function taskIdOf(request: JsonRpcRequest): string | undefined {
  const param = isObject(request.params) ? request.params['taskId'] : undefined;
  return typeof param === 'string' ? param : undefined;
}

function pathOf(url: string | undefined): string {
  const end = url?.indexOf('?') ?? -1;
  return end < 0 ? (url ?? '/') : (url as string).slice(0, end);
}

/** The body when it is one valid JSON-RPC `events/stream` request, else undefined (the handler's way answers it). */
function streamRequestOf(body: string | undefined): Record<string, unknown> | undefined {
  if (body === undefined) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isObject(message) || validateMessage(message) !== undefined) return undefined;
  return message['method'] === EventsMethod.stream && 'id' in message ? message : undefined;
}
