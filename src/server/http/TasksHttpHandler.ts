import { randomUUID } from 'node:crypto';

import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  readRequestBody,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

import { ErrorCodes, toJsonRpcError, validateMessage, type JsonRpcRequest } from '../../rpc/index.js';
import { factoryArgumentError } from './factoryArgumentError.js';
import { jsonRpcErrorResponse, sessionNotFoundResponse } from './jsonRpcErrorResponse.js';
import { requestGuardResponse, type RequestGuardOptions } from './requestGuardResponse.js';
import { EventStoreBudget } from './EventStoreBudget.js';
import { MemoryEventStore } from './MemoryEventStore.js';
import { SessionRegistry } from './SessionRegistry.js';
import { clientKeyOf, tagClientAddress } from '../limits/clientKey.js';
import { withBodyEnd } from './fast/withBodyEnd.js';
import { principalOwnerOf, resolveCaller } from '../limits/resolveCaller.js';
import { listenTaskIds, serveTaskListen, withoutTaskIds } from './serveTaskListen.js';
import { TaskFastPath } from './fast/TaskFastPath.js';
import { ModernEventsPath } from './ModernEventsPath.js';
import { NodeEventStreams } from './NodeEventStreams.js';
import { TaskConnection } from '../connection/TaskConnection.js';

import { runtimeOf, type McpTasks } from '../McpTasks.js';
import type { AuthInfoLike, ServerFactory, TransportLike } from '../ServerLike.js';

export interface TasksHttpHandlerOptions extends RequestGuardOptions {
  /**
   * The factory of the server instances that answer requests here, when it is not the runtime's own `server` (a
   * server whose task runs are instrumented, say). Default: the `server` given to createMcpTasks.
   */
  server?: ServerFactory;
  /**
   * Authenticates a request: return its auth info, undefined for anonymous, or a Response to refuse it.
   * Task ownership follows the returned principal (client id / `extra.sub`).
   */
  authenticate?: (
    request: Request,
  ) => Promise<AuthInfoLike | undefined | Response> | AuthInfoLike | undefined | Response;
  /**
   * A 2025-era session with no request in flight for this long is closed (its tasks go on). Default 30 minutes.
   */
  sessionIdleMs?: number;
  /** Open 2025-era sessions in all; further initializes are refused with 503. Default 1000. */
  maxSessions?: number;
  /**
   * Open sessions of one client (its principal, else its remote address); at the cap its least recently used idle
   * session is closed to make room. Default 100.
   */
  maxSessionsPerClient?: number;
  /** Bounds of the event stores that let 2025-era sessions resume dropped streams. */
  eventStore?: {
    /** All sessions together. Default 256 MiB. */
    maxBytes?: number;
    /** One session. Default 16 MiB. */
    maxBytesPerSession?: number;
    /** How long an answered stream stays resumable. Default 60 s. */
    answeredRetentionMs?: number;
  };
  /** Task ids one `subscriptions/listen` may name. Default 1000. */
  maxListenTaskIds?: number;
}

export interface TasksHttpHandler {
  /** `remoteAddress` tells clients apart for the per-client session cap when requests are not authenticated. */
  fetch(request: Request, info?: { remoteAddress?: string }): Promise<Response>;
  close(): Promise<void>;
  /** Open 2025-era sessions. */
  readonly sessionCount: number;
  /** Bytes held by the sessions' event stores together. */
  readonly eventStoreBytes: number;
}

const DEFAULT_MAX_LISTEN_TASK_IDS = 1000;
const DEFAULT_MAX_SESSIONS = 1000;
const DEFAULT_MAX_SESSIONS_PER_CLIENT = 100;
const DEFAULT_SESSION_IDLE_MS = 30 * 60 * 1000;
const DEFAULT_EVENT_STORE_BYTES = 256 * 1024 * 1024;
const DEFAULT_EVENT_STORE_BYTES_PER_SESSION = 16 * 1024 * 1024;
const DEFAULT_ANSWERED_RETENTION_MS = 60_000;
/** The reconnection delay a session's priming events suggest. */
const RETRY_MS = 1000;

/**
 * One HTTP endpoint for every wire generation: 2025-era traffic gets stateful sessions (or the stateless idiom for a
 * client that sends no session), 2026-07-28 traffic goes to the SDK's per-request handler; every server instance is
 * attached to the same tasks runtime.
 */
export function createTasksHttpHandler(tasks: McpTasks, options: TasksHttpHandlerOptions = {}): TasksHttpHandler {
  if (typeof options !== 'object' || options === null) throw factoryArgumentError('createTasksHttpHandler');
  const factory = options.server;
  const runtime = runtimeOf(tasks);
  const attached = tasks.wrapFactory(factory);
  const sessions = new SessionRegistry({
    maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
    maxSessionsPerClient: options.maxSessionsPerClient ?? DEFAULT_MAX_SESSIONS_PER_CLIENT,
    idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
  });
  const eventBudget = new EventStoreBudget(options.eventStore?.maxBytes ?? DEFAULT_EVENT_STORE_BYTES);
  const eventLimits = {
    maxBytesPerSession: options.eventStore?.maxBytesPerSession ?? DEFAULT_EVENT_STORE_BYTES_PER_SESSION,
    answeredRetentionMs: options.eventStore?.answeredRetentionMs ?? DEFAULT_ANSWERED_RETENTION_MS,
  };
  // Clients that vanish without DELETE would otherwise keep their session (and its event store) forever.
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const sweeper = setInterval(() => sessions.sweep(), Math.min(60_000, Math.max(1000, idleMs / 2)));
  sweeper.unref();
  const modern = createMcpHandler((context) => attached(context) as never, { legacy: 'reject' });
  // events/* of the 2026 wire: answered by the runtime without an instance of the author's server per request.
  const modernEvents = new ModernEventsPath(runtime);
  // events/stream of the 2026 wire when served by node:http (serveHttp): its SSE written to node's response.
  const nodeEvents = new NodeEventStreams({ runtime, options, serveAuthenticated });
  const maxListenTaskIds = options.maxListenTaskIds ?? DEFAULT_MAX_LISTEN_TASK_IDS;

  async function legacy(
    request: Request,
    authInfo: AuthInfoLike | undefined,
    body: unknown,
    client: string,
  ): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    const handleOptions = {
      ...(authInfo && { authInfo: authInfo as never }),
      ...(body !== undefined && { parsedBody: body }),
    };
    if (sessionId) {
      const session = sessions.getFor(sessionId, principalOwnerOf(authInfo));
      if (!session) return sessionNotFoundResponse();
      session.seen = Date.now();
      if (request.method === 'GET') session.connection.standaloneOpened();
      return sessions.track(session, await session.transport.handleRequest(request, handleOptions));
    }
    if (!isInitialize(body)) return serveStateless(request, authInfo, handleOptions);
    const admission = sessions.admit(client);
    if (admission.refused !== undefined)
      return jsonRpcErrorResponse(503, ErrorCodes.TRANSPORT_REFUSED, `${admission.refused}; retry later`, {
        'retry-after': String(Math.ceil(Math.min(idleMs, 60_000) / 1000)),
      });
    try {
      // A dropped stream (a long tasks/result) can be resumed with Last-Event-ID instead of losing its answer.
      const events = new MemoryEventStore(eventBudget, eventLimits);
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id: string) =>
          sessions.add(id, {
            transport,
            events,
            connection,
            streams: new Map(),
            client,
            principal: principalOwnerOf(authInfo),
            seen: Date.now(),
            inFlight: 0,
          }),
        onsessionclosed: (id: string) => sessions.delete(id),
        eventStore: events,
        retryInterval: RETRY_MS,
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
        events.clear();
      };
      // The session's requests of the fast path are answered through this connection, as those of the transport.
      const connection = new TaskConnection(transport as TransportLike, runtime, { standaloneStream: true });
      const server = await attached({ era: 'legacy', ...(authInfo && { authInfo }) });
      await server.connect(connection);
      const response = await transport.handleRequest(request, handleOptions);
      if (!transport.sessionId) events.clear();
      return response;
    } finally {
      admission.release();
    }
  }

  async function serveStateless(
    request: Request,
    authInfo: AuthInfoLike | undefined,
    handleOptions: Parameters<WebStandardStreamableHTTPServerTransport['handleRequest']>[1],
  ): Promise<Response> {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = await attached({ era: 'legacy', ...(authInfo && { authInfo }) });
    await server.connect(transport);
    // One exchange: once its answer is out, the instance and its connection go (each would stay registered).
    const teardown = () => {
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    };
    try {
      return withBodyEnd(await transport.handleRequest(request, handleOptions), teardown);
    } catch (error) {
      teardown();
      throw error;
    }
  }

  /** Everything after authentication: the request is checked, then goes to a session, the stateless idiom or 2026. */
  async function serveAuthenticated(
    request: Request,
    auth: AuthInfoLike | undefined,
    remoteAddress: string | undefined,
  ): Promise<Response> {
    // Task quotas of callers that cannot be told apart otherwise are kept per peer address (and client key).
    tagClientAddress(request, remoteAddress);
    let body: unknown;
    if (request.method === 'POST') {
      if (!isJsonContentType(request.headers.get('content-type')))
        return jsonRpcErrorResponse(
          415,
          ErrorCodes.TRANSPORT_REFUSED,
          'Unsupported Media Type: Content-Type must be application/json',
        );
      // The body is read and checked once here, then handed on parsed: a malformed message gets the right
      // JSON-RPC error (and its id) instead of a generic parse error.
      const read = await readRequestBody(request);
      if (read.tooLarge) return jsonRpcErrorResponse(413, ErrorCodes.INVALID_REQUEST, 'Payload Too Large');
      try {
        body = JSON.parse(read.text);
      } catch {
        return jsonRpcErrorResponse(400, ErrorCodes.PARSE_ERROR, 'Parse error: the body is not valid JSON');
      }
      const invalid = (Array.isArray(body) ? body : [body]).map(validateMessage).find((error) => error !== undefined);
      if (invalid)
        return new Response(JSON.stringify(invalid), {
          status: 400,
          headers: { 'content-type': 'application/json' },
        });
    }
    const taskIds = listenTaskIds(body);
    if (taskIds) {
      const listen = body as JsonRpcRequest;
      if (taskIds.length > maxListenTaskIds)
        return Response.json({
          jsonrpc: '2.0',
          id: listen.id,
          error: {
            code: ErrorCodes.INVALID_PARAMS,
            message: `Too many task ids: at most ${maxListenTaskIds} in one subscriptions/listen`,
          },
        });
      const caller = resolveCaller(auth, undefined, runtime.callerOptions, clientKeyOf(request));
      try {
        runtime.checkRate(caller, 'wait');
      } catch (error) {
        return Response.json({ jsonrpc: '2.0', id: listen.id, error: toJsonRpcError(error) });
      }
      // Task status push (SEP-2663) is served here, but the listen still goes through the SDK first: its header,
      // version and capability checks apply, its subscription cap counts it, and it serves any other
      // notifications the listen asks for.
      const others = withoutTaskIds(listen);

      const sdk = await modern.fetch(
        new Request(request.url, {
          method: 'POST',
          headers: request.headers,
          body: JSON.stringify(others),
          signal: request.signal,
        }),
        { ...(auth && { authInfo: auth as never }), parsedBody: others },
      );
      if (!sdk.ok || !sdk.headers.get('content-type')?.startsWith('text/event-stream')) return sdk;
      return serveTaskListen(tasks.engine, caller, listen, taskIds, sdk);
    }
    // A session id only exists on the 2025 wire, so session traffic skips classifying the body.
    if (request.headers.has('mcp-session-id') || (await isLegacyRequest(request, body)))
      return legacy(request, auth, body, clientKey(auth, remoteAddress));
    const events = modernEvents.serve(request, body, auth);
    if (events) return events;
    return modern.fetch(request, {
      ...(auth && { authInfo: auth as never }),
      ...(body !== undefined && { parsedBody: body }),
    });
  }

  const handler: TasksHttpHandler = {
    async fetch(request, info) {
      tagClientAddress(request, info?.remoteAddress);
      const refused = requestGuardResponse(request, options);
      if (refused) return refused;
      const unserved = unservedMethodResponse(request);
      if (unserved) return unserved;
      const auth = await options.authenticate?.(request);
      if (auth instanceof Response) return auth;
      return serveAuthenticated(request, auth, info?.remoteAddress);
    },
    async close() {
      clearInterval(sweeper);
      nodeEvents.close();
      await sessions.closeAll();
      await Promise.all([modern.close(), modernEvents.close()]);
    },
    get sessionCount() {
      return sessions.size;
    },
    get eventStoreBytes() {
      return eventBudget.used;
    },
  };
  fastPaths.set(
    handler,
    (path, plain) => new TaskFastPath({ sessions, options, retryMs: RETRY_MS, ...plain, serveAuthenticated }, path),
  );
  nodeEventStreams.set(handler, nodeEvents);
  return handler;
}

const nodeEventStreams = new WeakMap<TasksHttpHandler, NodeEventStreams>();

/** The `events/stream` path of a handler served by node:http (serveHttp). */
export function nodeEventStreamsOf(handler: TasksHttpHandler): NodeEventStreams | undefined {
  return nodeEventStreams.get(handler);
}

/** Whether the fast path also hands plain requests to the session's server, and with a web Request or not. */
export interface PlainFastPath {
  forwardPlain: boolean;
  webRequest: boolean;
}

const fastPaths = new WeakMap<TasksHttpHandler, (path: string, plain: PlainFastPath) => TaskFastPath>();

/** The fast path for the session traffic of a handler served at `path` by node:http (serveHttp). */
export function taskFastPathOf(
  handler: TasksHttpHandler,
  path: string,
  plain: PlainFastPath = { forwardPlain: true, webRequest: true },
): TaskFastPath | undefined {
  return fastPaths.get(handler)?.(path, plain);
}

/**
 * Answers at once what the endpoint does not serve, instead of letting a transport hold the request open: GET (the
 * standalone SSE stream) and DELETE only exist within a 2025-era session, so without one they are 405 like the SDK's
 * stateless idiom; methods other than GET, POST and DELETE are 405 too.
 */
function unservedMethodResponse(request: Request): Response | undefined {
  const method = request.method.toUpperCase();
  if (method === 'POST') return undefined;
  if (method !== 'GET' && method !== 'DELETE')
    return jsonRpcErrorResponse(405, ErrorCodes.TRANSPORT_REFUSED, 'Method not allowed.', {
      allow: 'GET, POST, DELETE',
    });
  if (!request.headers.has('mcp-session-id'))
    return jsonRpcErrorResponse(
      405,
      ErrorCodes.TRANSPORT_REFUSED,
      `Method not allowed: ${method} needs an Mcp-Session-Id (only sessions have a stream to open or close)`,
      { allow: 'POST' },
    );
  return undefined;
}

/** Who a session belongs to for the per-client cap: the principal when authenticated, else the remote address. */
function clientKey(auth: AuthInfoLike | undefined, remoteAddress: string | undefined): string {
  const subject = auth?.extra?.['sub'];
  if (auth?.clientId || typeof subject === 'string') return `principal:${JSON.stringify([auth?.clientId, subject])}`;
  return `address:${remoteAddress ?? 'unknown'}`;
}

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => m && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');
}
