import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { localhostAllowedHostnames, validateHostHeader } from '@modelcontextprotocol/server';

import type { ConsoleOptions, TaskConsole } from '../../console/index.js';
import { requestUrlOf } from '../../protocol/index.js';
import { ErrorCodes } from '../../rpc/index.js';
import { protectedResourceMetadataResponse, type ProtectedResourceOptions } from '../auth/ProtectedResource.js';
import { LazyAbort } from '../connection/LazyAbort.js';
import { factoryArgumentError } from './factoryArgumentError.js';
import { jsonRpcErrorResponse } from './jsonRpcErrorResponse.js';
import { requestGuardResponse } from './requestGuardResponse.js';
import { runtimeOf, type McpTasks } from '../McpTasks.js';
import { readNodeBody, RequestBodyTooLargeError, webRequestOf } from './fast/nodeRequest.js';
import {
  createTasksHttpHandler,
  nodeEventStreamsOf,
  taskFastPathOf,
  type TasksHttpHandler,
  type TasksHttpHandlerOptions,
} from './TasksHttpHandler.js';
import { writeNodeResponse } from './fast/writeNodeResponse.js';

export interface ServeHttpOptions extends TasksHttpHandlerOptions {
  /** Default 3000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default /mcp. */
  path?: string;
  /** Serves the runtime's Prometheus metrics here when it has them (`metrics` option), e.g. `/metrics`. */
  metricsPath?: string;
  /**
   * Bytes of a response the client has not read yet before the server cuts the connection (a client that does not
   * keep up with its stream). Default 32 MiB (above a session's event store, so a full replay fits).
   */
  maxPendingBytes?: number;
  /** A client that reads nothing of its pending output for this long is cut off. Default 30 s. */
  slowReaderMs?: number;
  /**
   * How long an idle keep-alive connection stays open for the client's next request. Default 30 s, well above the
   * 4 to 5 s clients assume, so a client never sends a request on a connection the server is closing.
   */
  keepAliveTimeoutMs?: number;
  /** Serves the Protected Resource Metadata (RFC 9728) under /.well-known/oauth-protected-resource; `jwtAuth` sets it. */
  protectedResource?: ProtectedResourceOptions;
  /**
   * Serves the operator's console (docs/operations.md) at `console.path` (default `/console`), behind its token
   * (`console.token`, else `MCP_TASKS_CONSOLE_TOKEN`, else generated: read it from the handle's `console`).
   */
  console?: ConsoleOptions;
  /**
   * Requests of 2025-era sessions answered from node:http directly instead of through the SDK transport: same checks
   * and answers, less work per request. Task traffic (`tasks/*`, task-augmented `tools/call`) and, unless
   * `plainRequests` is false, the plain requests the session's server answers (`tools/call`, `resources/read`,
   * `ping`…), whose handlers get the web Request in `ctx.http.req` as on the SDK's way unless `webRequest` is false
   * (for a server whose handlers never read it: one less object per request). The 2026-07-28 wire's `events/stream`
   * is written to node's response the same way (its SSE, without the SDK's per-request transport held for the
   * stream's life). Default true; `false` sends everything the SDK's way.
   */
  fastPath?: boolean | { plainRequests?: boolean; webRequest?: boolean };
}

export interface HttpServerHandle {
  url: string;
  port: number;
  handler: TasksHttpHandler;
  server: Server;
  /** The console, when `console` was given: its `openUrl(origin)` opens it with the token. */
  console?: TaskConsole;
  /** Requests answered on the fast path so far (see `fastPath`). */
  readonly fastPathServed: number;
  close(): Promise<void>;
}

const DEFAULT_MAX_PENDING_BYTES = 32 * 1024 * 1024;
const DEFAULT_SLOW_READER_MS = 30_000;
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 30_000;
/** One reason for every request whose response closed: an abort's own DOMException costs a stack trace per request. */
const CONNECTION_CLOSED = new DOMException('The response was closed', 'AbortError');

/** Serves the tasks-enabled MCP server (the `server` factory of `tasks`) over Streamable HTTP on node:http. */
export async function serveHttp(tasks: McpTasks, options: ServeHttpOptions = {}): Promise<HttpServerHandle> {
  if (typeof options !== 'object' || options === null) throw factoryArgumentError('serveHttp');
  const runtime = runtimeOf(tasks);
  const executor = runtime.executor;
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const handler = createTasksHttpHandler(tasks, options);
  const plain = typeof options.fastPath === 'object' ? options.fastPath : {};
  const fast =
    options.fastPath === false
      ? undefined
      : taskFastPathOf(handler, path, {
          forwardPlain: plain.plainRequests !== false,
          webRequest: plain.webRequest !== false,
        });
  // events/stream of the 2026 wire, its SSE written to node's response (NodeEventStreams says why).
  const nodeEvents = options.fastPath === false ? undefined : nodeEventStreamsOf(handler);
  const maxPendingBytes = options.maxPendingBytes ?? DEFAULT_MAX_PENDING_BYTES;
  // The console (and its page's code) loads only when it is configured.
  const taskConsole =
    options.console &&
    new (await import('../../console/index.js')).TaskConsole(tasks.engine, {
      ...(executor.queueStats && { queueStats: executor.queueStats.bind(executor) }),
      ...(executor.load && { load: executor.load.bind(executor) }),
      ...(options.allowedHostnames && { allowedHostnames: options.allowedHostnames }),
      ...(options.allowedOrigins && { allowedOrigins: options.allowedOrigins }),
      ...options.console,
    });

  async function route(request: Request, remoteAddress: string | undefined): Promise<Response> {
    // Every path, not only the MCP one: metrics and 404s answer nothing to a foreign page or a rebound host name.
    const refused = requestGuardResponse(request, options);
    if (refused) return refused;
    const { pathname } = new URL(request.url);
    if (taskConsole?.owns(pathname))
      return (await taskConsole.fetch(request, remoteAddress === undefined ? {} : { remoteAddress })) as Response;
    if (options.metricsPath !== undefined && pathname === options.metricsPath && tasks.metrics) {
      if (request.method !== 'GET')
        return jsonRpcErrorResponse(405, ErrorCodes.TRANSPORT_REFUSED, 'Method not allowed.', { allow: 'GET' });
      return new Response(await tasks.metrics.text(), {
        headers: { 'content-type': tasks.metrics.registry.contentType },
      });
    }
    if (options.protectedResource && pathname.startsWith('/.well-known/')) {
      const hostOk = validateHostHeader(
        request.headers.get('host'),
        options.allowedHostnames ?? localhostAllowedHostnames(),
      );
      const metadata = hostOk.ok && protectedResourceMetadataResponse(options.protectedResource, request.url, path);
      if (metadata) return metadata;
    }
    if (pathname !== path) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain' } });
    return handler.fetch(request, remoteAddress === undefined ? undefined : { remoteAddress });
  }

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Aborted when the exchange ends; only made for what needs it (a web Request), which most fast requests never do.
    const abort = new LazyAbort();
    res.once('close', () => abort.abort(CONNECTION_CLOSED));
    const onSlowReader = () =>
      runtime.logger.warn({ url: req.url, maxPendingBytes }, 'HTTP response not read by its client; connection cut');
    const slowReaderMs = options.slowReaderMs ?? DEFAULT_SLOW_READER_MS;
    const write = (response: Response) =>
      writeNodeResponse(response, res, { maxPendingBytes, slowReaderMs, onSlowReader });
    let response: Response;
    try {
      // Routes are read from the request-target only; a Host that is more than host[:port] could otherwise name one.
      if (!requestUrlOf(req.headers.host, req.url)) {
        return await write(
          jsonRpcErrorResponse(
            400,
            ErrorCodes.TRANSPORT_REFUSED,
            'Bad Request: the Host header must be host[:port] and the request-target a path',
            { connection: 'close' },
          ),
        );
      }
      const body = await readNodeBody(req);
      // Task traffic of sessions skips the web Request/Response round trip (docs/architecture.md, "fast path").
      // No getter here: with an accessor of the object's own, V8 kept the whole exchange through every scavenge
      // until the next full collection (some 2.6 KB promoted a request).
      const io = {
        signal: () => abort.signal,
        write,
        maxPendingBytes,
        slowReaderMs,
        onSlowReader,
      };
      if (await fast?.serve(req, res, body, io)) return;
      if (await nodeEvents?.serve(path, req, res, body, io)) return;
      response = await route(
        webRequestOf(req, body, () => abort.signal),
        req.socket.remoteAddress,
      );
    } catch (error) {
      if (error instanceof RequestBodyTooLargeError)
        response = jsonRpcErrorResponse(413, ErrorCodes.TRANSPORT_REFUSED, error.message, { connection: 'close' });
      else {
        runtime.logger.error({ error: String(error) }, 'HTTP request failed');
        if (res.headersSent) return void res.destroy();
        response = jsonRpcErrorResponse(500, ErrorCodes.INTERNAL_ERROR, 'Internal server error');
      }
    }
    await write(response);
  }

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) => {
      runtime.logger.error({ error: String(error) }, 'HTTP request failed');
      res.destroy();
    });
  });
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`,
    port,
    handler,
    server,
    ...(taskConsole && { console: taskConsole }),
    get fastPathServed() {
      return fast?.served ?? 0;
    },
    async close() {
      taskConsole?.close();
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
