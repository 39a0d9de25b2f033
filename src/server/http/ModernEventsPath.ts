import {
  classifyInboundRequest,
  PerRequestHTTPServerTransport,
  SdkError,
  SdkErrorCode,
  type JSONRPCRequest,
  type MessageClassification,
} from '@modelcontextprotocol/server';

import { ErrorCodes, isObject } from '../../rpc/index.js';
import { EVENTS_METHODS, MODERN_PROTOCOL_VERSION } from '../../protocol/index.js';
import { TaskConnection } from '../connection/TaskConnection.js';
import type { TaskRuntime } from '../TaskRuntime.js';
import type { AuthInfoLike, TransportLike } from '../ServerLike.js';

/**
 * `events/*` on the 2026-07-28 wire without an instance of the author's server: the runtime's events front answers
 * them before the server would see them, so building one per request (its tools and schemas, held for as long as an
 * `events/stream` stays open) bought nothing. The request goes through the SDK's own per-request transport (the same
 * JSON or SSE framing and keep-alive) and a TaskConnection (the same routing, caller from auth, and errors), only
 * without a server behind it.
 *
 * Only a request the SDK's ladder would pass is taken (modern, the served revision, its standard headers present and
 * matching); anything else returns undefined and takes the SDK's way, which answers it with the ladder's own error.
 */
export class ModernEventsPath {
  /** Exchanges in flight, closed with the handler (as the SDK closes its in-flight instances). */
  private readonly open = new Set<PerRequestHTTPServerTransport>();

  constructor(private readonly runtime: TaskRuntime) {}

  /** The response to `body` when this path takes it, else undefined. */
  serve(request: Request, body: unknown, auth: AuthInfoLike | undefined): Promise<Response> | undefined {
    if (!this.runtime.events || request.method !== 'POST' || !isEventsRequest(body)) return undefined;
    const headers = request.headers;
    const protocolVersionHeader = headers.get('mcp-protocol-version') ?? undefined;
    const mcpMethodHeader = headers.get('mcp-method') ?? undefined;
    // The SDK's standard-header rung needs both; a mismatch or absence is its error to give.
    if (protocolVersionHeader !== MODERN_PROTOCOL_VERSION || mcpMethodHeader !== body.method) return undefined;
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader,
      mcpMethodHeader,
      ...(headers.has('mcp-name') && { mcpNameHeader: headers.get('mcp-name') as string }),
      body,
    });
    if (route.kind !== 'modern' || route.messageKind !== 'request') return undefined;
    if (route.classification.revision !== MODERN_PROTOCOL_VERSION) return undefined;
    return this.answer(route.message, route.classification, request, auth);
  }

  async close(): Promise<void> {
    const open = [...this.open];
    this.open.clear();
    await Promise.all(open.map((transport) => transport.close().catch(() => {})));
  }

  private async answer(
    message: JSONRPCRequest,
    classification: MessageClassification,
    request: Request,
    auth: AuthInfoLike | undefined,
  ): Promise<Response> {
    const transport = new PerRequestHTTPServerTransport({ classification });
    const connection = new TaskConnection(transport as TransportLike, this.runtime);
    // The events front claims every events/* of a modern request (spec §1), so nothing is left for a server; were
    // anything delivered, the exchange ends rather than hangs.
    connection.onmessage = () => void transport.close();
    connection.onclose = () => this.open.delete(transport);
    this.open.add(transport);
    try {
      await connection.start();
      return await transport.handleMessage(message, { request, ...(auth && { authInfo: auth as never }) });
    } catch (error) {
      // As the SDK's handler answers a failed exchange.
      this.open.delete(transport);
      if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed)
        return new Response(null, { status: 499 });
      await transport.close().catch(() => {});
      return Response.json(
        {
          jsonrpc: '2.0',
          id: message.id,
          error: { code: ErrorCodes.INTERNAL_ERROR, message: 'Internal server error' },
        },
        { status: 500 },
      );
    }
  }
}

function isEventsRequest(body: unknown): body is { method: string; id: unknown } {
  return isObject(body) && typeof body['method'] === 'string' && EVENTS_METHODS.includes(body['method']);
}
