import type { IncomingMessage, ServerResponse } from 'node:http';

import { DEFAULT_NEGOTIATED_PROTOCOL_VERSION, isJsonContentType } from '@modelcontextprotocol/server';

import { RELATED_TASK_META } from '../../../protocol/index.js';
import { ErrorCodes, isObject, validateMessage, type JsonRpcRequest } from '../../../rpc/index.js';
import { tagClientAddress } from '../../limits/clientKey.js';
import { principalOwnerOf } from '../../limits/resolveCaller.js';
import type { AuthInfoLike, MessageExtraLike } from '../../ServerLike.js';
import { FastTaskStream } from './FastTaskStream.js';
import { jsonRpcErrorResponse, sessionNotFoundResponse } from '../jsonRpcErrorResponse.js';
import { webRequestOf } from './nodeRequest.js';
import { passesRequestGuard, type RequestGuardOptions } from '../requestGuardResponse.js';
import type { Session, SessionRegistry } from '../SessionRegistry.js';

/** What the fast path needs of the handler it shortcuts. */
export interface TaskFastPathHost {
  readonly sessions: SessionRegistry;
  readonly options: RequestGuardOptions & {
    authenticate?: (
      request: Request,
    ) => Promise<AuthInfoLike | undefined | Response> | AuthInfoLike | undefined | Response;
  };
  /** The reconnection delay a session's priming events suggest. */
  readonly retryMs: number;
  /** Whether requests no dialect answers (a plain `tools/call`, `ping`…) go to the session's server here too. */
  readonly forwardPlain: boolean;
  /** Whether such a request comes with a web Request (`ctx.http.req` of its handler), as the transport gives it. */
  readonly webRequest: boolean;
  /** The handler's own way for an authenticated request (when no dialect answers it after all). */
  serveAuthenticated(
    request: Request,
    auth: AuthInfoLike | undefined,
    remoteAddress: string | undefined,
  ): Promise<Response>;
}

/** How the HTTP server writes an answer of the SDK's way, and its output bounds. */
export interface FastPathIo {
  /** The signal aborted when the exchange ends (made on first use). */
  readonly signal: () => AbortSignal;
  write(response: Response): Promise<void>;
  maxPendingBytes: number;
  slowReaderMs: number;
  onSlowReader(): void;
}

/** Requests the fast path may answer: the task methods of every generation and task-augmented `tools/call`. */
const FAST_METHODS = new Set([
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
  'tasks/delete',
  'tools/call',
]);
/**
 * Requests the session's SDK server answers that the fast path may hand it (`forwardPlain`): the transport treats them
 * all alike (one SSE stream per request, closed with its response). Not `initialize`, which the transport answers
 * itself, nor `subscriptions/listen`, which the handler serves apart.
 */
const FORWARDED_METHODS = new Set([
  'tools/call',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'ping',
]);
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
/** The SDK transport's keep-alive interval on a request's SSE stream. */
const KEEP_ALIVE_MS = 15_000;

/**
 * Requests of 2025-era Streamable HTTP sessions answered from node:http directly (no web Request/Response, no SDK
 * transport in between), through the session's TaskConnection: task traffic by the same dialects that answer it on
 * the SDK's way, and (`forwardPlain`) the plain requests no dialect answers by the session's SDK server, as the
 * transport would hand them over. It only takes a request it can answer exactly as the SDK's way would: anything
 * else — another path, no or an unknown session, a Host or Origin refused, a content type, Accept or protocol version
 * header the transport would refuse, a body that is not one plain JSON-RPC request, a method it does not take — is
 * declined before authentication (false), and the SDK's way answers it, errors included. The checks are the
 * transport's own, or stricter. (The transport's scope challenges never apply: an SDK server sets them on the
 * transport it connects to, the TaskConnection, which takes none.) A GET resuming (Last-Event-ID) a stream of the
 * fast path is served here too, since only this path knows the stream is still waiting for its answer.
 */
export class TaskFastPath {
  /** Requests a dialect answered on this path (resumed streams not counted). */
  served = 0;

  constructor(
    private readonly host: TaskFastPathHost,
    private readonly path: string,
  ) {}

  /** True when the request was answered here; false when the SDK's way must answer it (nothing was written). */
  async serve(req: IncomingMessage, res: ServerResponse, body: string | undefined, io: FastPathIo): Promise<boolean> {
    const sessionId = req.headers['mcp-session-id'];
    const version = req.headers['mcp-protocol-version'];
    if (typeof sessionId !== 'string' || (version !== undefined && typeof version !== 'string')) return false;
    if (pathOf(req.url) !== this.path) return false;
    const session = this.host.sessions.get(sessionId);
    if (!session) return false;
    if (!passesRequestGuard(req.headers.host, req.headers.origin, this.host.options)) return false;
    // The transport's MCP-Protocol-Version check.
    if (version !== undefined && session.connection.speaksVersion(version) !== true) return false;
    if (req.method === 'POST') return this.post(req, res, session, body, version, io);
    if (req.method === 'GET') return this.resume(req, res, session, io);
    return false;
  }

  private async post(
    req: IncomingMessage,
    res: ServerResponse,
    session: Session,
    body: string | undefined,
    version: string | undefined,
    io: FastPathIo,
  ): Promise<boolean> {
    const accept = req.headers.accept;
    if (!isJsonContentType(req.headers['content-type'] ?? null)) return false;
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return false;
    const request = plainRequestOf(body);
    if (!request) return false;
    const forward = this.host.forwardPlain && FORWARDED_METHODS.has(request.method);
    if (!forward && !FAST_METHODS.has(request.method)) return false;
    const auth = await this.authenticate(req, body, io);
    if (auth instanceof Response) {
      await io.write(auth);
      return true;
    }
    if (!this.mayUse(session, auth.info)) {
      await io.write(sessionNotFoundResponse());
      return true;
    }
    const { sessions, retryMs } = this.host;
    const clientVersion = version ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    const stream: FastTaskStream = new FastTaskStream({
      sessionId: session.transport.sessionId ?? '',
      events: session.events,
      // The transport primes (makes resumable) the streams of clients whose version takes an empty data line.
      primed: session.connection.speaksVersion(clientVersion) === true && clientVersion >= '2025-11-25',
      retryMs,
      keepAliveMs: KEEP_ALIVE_MS,
      maxPendingBytes: io.maxPendingBytes,
      slowReaderMs: io.slowReaderMs,
      onSlowReader: io.onSlowReader,
      onAnswered: () => session.streams.delete(stream.streamId),
    });
    const extra: MessageExtraLike = {
      ...(auth.info && { authInfo: auth.info }),
      ...(auth.request ? { request: auth.request } : { requestInfo: { headers: req.headers } }),
    };
    // What the transport passes along with a request it delivers to the SDK server (handlers see it as `ctx.http`).
    const delivered = (): MessageExtraLike => {
      let web = auth.request;
      if (!web && this.host.webRequest) {
        // Without its body, read already (as the transport's has been).
        web = webRequestOf(req, undefined, io.signal);
        tagClientAddress(web, req.socket.remoteAddress);
      }
      return {
        authInfo: auth.info,
        ...(web ? { request: web } : { requestInfo: { headers: req.headers } }),
        ...(stream.primed && {
          closeSSEStream: () => stream.closeClient(),
          closeStandaloneSSEStream: () => session.transport.closeStandaloneSSEStream(),
        }),
      };
    };
    if (!session.connection.answerOnStream(request, extra, stream.send, forward ? delivered : undefined)) {
      // Declined after all (not answered and not handed on, or its id in flight): the SDK's way, without authenticating
      // again.
      if (!auth.request) return false;
      await io.write(await this.host.serveAuthenticated(auth.request, auth.info, req.socket.remoteAddress));
      return true;
    }
    this.served++;
    session.streams.set(stream.streamId, stream);
    res.once('close', sessions.begin(session));
    await stream.open(res);
    return true;
  }

  /** GET with Last-Event-ID on a stream of the fast path still waiting for its answer. */
  private async resume(req: IncomingMessage, res: ServerResponse, session: Session, io: FastPathIo): Promise<boolean> {
    const lastEventId = req.headers['last-event-id'];
    if (typeof lastEventId !== 'string' || !req.headers.accept?.includes('text/event-stream')) return false;
    const streamId = await session.events.getStreamIdForEventId(lastEventId);
    const stream = streamId === undefined ? undefined : session.streams.get(streamId);
    if (!stream) return false;
    const auth = await this.authenticate(req, undefined, io);
    if (auth instanceof Response) await io.write(auth);
    else if (!this.mayUse(session, auth.info)) await io.write(sessionNotFoundResponse());
    else if (stream.attached)
      await io.write(
        jsonRpcErrorResponse(409, ErrorCodes.TRANSPORT_REFUSED, 'Conflict: Stream already has an active connection'),
      );
    else {
      res.once('close', this.host.sessions.begin(session));
      await stream.resume(res, lastEventId);
    }
    return true;
  }

  /** Only the principal that opened a session may use it; to anyone else it answers as an unknown session. */
  private mayUse(session: Session, info: AuthInfoLike | undefined): boolean {
    return session.principal === principalOwnerOf(info);
  }

  /** The `authenticate` hook's verdict, with the web Request it was shown (only built when there is a hook). */
  private async authenticate(
    req: IncomingMessage,
    body: string | undefined,
    io: FastPathIo,
  ): Promise<Response | { info?: AuthInfoLike; request?: Request }> {
    const hook = this.host.options.authenticate;
    if (!hook) return {};
    const request = webRequestOf(req, body, io.signal);
    tagClientAddress(request, req.socket.remoteAddress);
    const verdict = await hook(request);
    if (verdict instanceof Response) return verdict;
    return { request, ...(verdict && { info: verdict }) };
  }
}

function pathOf(url: string | undefined): string {
  const end = url?.indexOf('?') ?? -1;
  return end < 0 ? (url ?? '/') : (url as string).slice(0, end);
}

/**
 * One JSON-RPC request as the SDK transport's schema accepts it, judged at least as strictly (no other top-level
 * keys, an integer or string id, object params, a well-formed `_meta`); undefined for anything else.
 */
function plainRequestOf(body: string | undefined): JsonRpcRequest | undefined {
  if (body === undefined) return undefined;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isObject(message) || validateMessage(message) !== undefined) return undefined;
  if (Object.keys(message).some((key) => !REQUEST_KEYS.has(key))) return undefined;
  const id = message['id'];
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return undefined;
  const params = message['params'];
  if (params !== undefined && !isObject(params)) return undefined;
  const meta = params?.['_meta'];
  if (meta !== undefined) {
    if (!isObject(meta)) return undefined;
    const token = meta['progressToken'];
    if (token !== undefined && !(typeof token === 'string' || Number.isSafeInteger(token))) return undefined;
    const related = meta[RELATED_TASK_META];
    if (related !== undefined && !(isObject(related) && typeof related['taskId'] === 'string')) return undefined;
  }
  return message as unknown as JsonRpcRequest;
}
