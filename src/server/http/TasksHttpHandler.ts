import { randomUUID } from 'node:crypto';

import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  readRequestBody,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

import { ErrorCodes, toJsonRpcError, validateMessage, type JsonRpcRequest } from '../../rpc/index.js';
import { jsonRpcErrorResponse } from './jsonRpcErrorResponse.js';
import { requestGuardResponse, type RequestGuardOptions } from './requestGuardResponse.js';
import { MemoryEventStore } from './MemoryEventStore.js';
import { resolveCaller } from '../resolveCaller.js';
import { listenTaskIds, serveTaskListen, withoutTaskIds } from './serveTaskListen.js';

import type { McpTasks } from '../McpTasks.js';
import type { AuthInfoLike, ServerFactory } from '../ServerLike.js';

export interface TasksHttpHandlerOptions extends RequestGuardOptions {
  /**
   * Authenticates a request: return its auth info, undefined for anonymous, or a Response to refuse it.
   * Task ownership follows the returned principal (client id / `extra.sub`).
   */
  authenticate?: (
    request: Request,
  ) => Promise<AuthInfoLike | undefined | Response> | AuthInfoLike | undefined | Response;
  /** A 2025-era session without requests for this long is closed (its tasks go on). Default 30 minutes. */
  sessionIdleMs?: number;
  /** Task ids one `subscriptions/listen` may name. Default 1000. */
  maxListenTaskIds?: number;
}

export interface TasksHttpHandler {
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
  /** Open 2025-era sessions. */
  readonly sessionCount: number;
}

const DEFAULT_MAX_LISTEN_TASK_IDS = 1000;

/**
 * One HTTP endpoint for every wire generation: 2025-era traffic gets stateful sessions (or the stateless idiom for a
 * client that sends no session), 2026-07-28 traffic goes to the SDK's per-request handler; every server instance is
 * attached to the same tasks runtime.
 */
export function createTasksHttpHandler(
  tasks: McpTasks,
  factory: ServerFactory,
  options: TasksHttpHandlerOptions = {},
): TasksHttpHandler {
  const attached = tasks.wrapFactory(factory);
  const sessions = new Map<string, { transport: WebStandardStreamableHTTPServerTransport; seen: number }>();
  const idleMs = options.sessionIdleMs ?? 30 * 60 * 1000;
  // Clients that vanish without DELETE would otherwise keep their session (and its event store) forever.
  const sweeper = setInterval(
    () => {
      const cutoff = Date.now() - idleMs;
      for (const [id, session] of sessions) {
        if (session.seen >= cutoff) continue;
        sessions.delete(id);
        void session.transport.close().catch(() => {});
      }
    },
    Math.min(60_000, Math.max(1000, idleMs / 2)),
  );
  sweeper.unref();
  const modern = createMcpHandler((context) => attached(context) as never, { legacy: 'reject' });
  const maxListenTaskIds = options.maxListenTaskIds ?? DEFAULT_MAX_LISTEN_TASK_IDS;

  async function legacy(request: Request, authInfo: AuthInfoLike | undefined, body: unknown): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    const handleOptions = {
      ...(authInfo && { authInfo: authInfo as never }),
      ...(body !== undefined && { parsedBody: body }),
    };
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session) return jsonRpcErrorResponse(404, ErrorCodes.SESSION_NOT_FOUND, 'Session not found');
      session.seen = Date.now();
      return session.transport.handleRequest(request, handleOptions);
    }
    const opensSession = isInitialize(body);
    const transport = new WebStandardStreamableHTTPServerTransport({
      ...(opensSession
        ? {
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id: string) => void sessions.set(id, { transport, seen: Date.now() }),
            onsessionclosed: (id: string) => void sessions.delete(id),
            // A dropped stream (a long tasks/result) can be resumed with Last-Event-ID instead of losing its answer.
            eventStore: new MemoryEventStore(),
            retryInterval: 1000,
          }
        : { sessionIdGenerator: undefined }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const server = await attached({ era: 'legacy', ...(authInfo && { authInfo }) });
    await server.connect(transport);
    return transport.handleRequest(request, handleOptions);
  }

  return {
    async fetch(request) {
      const refused = requestGuardResponse(request, options);
      if (refused) return refused;
      const unserved = unservedMethodResponse(request);
      if (unserved) return unserved;
      const auth = await options.authenticate?.(request);
      if (auth instanceof Response) return auth;
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
        const caller = resolveCaller(auth, undefined, tasks.callerOptions);
        try {
          tasks.checkRate(caller.owner);
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
        return legacy(request, auth, body);
      return modern.fetch(request, {
        ...(auth && { authInfo: auth as never }),
        ...(body !== undefined && { parsedBody: body }),
      });
    },
    async close() {
      clearInterval(sweeper);
      await Promise.allSettled([...sessions.values()].map(({ transport }) => transport.close()));
      sessions.clear();
      await modern.close();
    },
    get sessionCount() {
      return sessions.size;
    },
  };
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

function isInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => m && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');
}
