import { ErrorCodes } from '../../rpc/index.js';

/** A transport-level refusal: an HTTP status with a JSON-RPC error body (id null), as the SDK's transports answer. */
export function jsonRpcErrorResponse(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/**
 * What a request naming a session it may not use gets: an unknown or closed session, or one another principal opened
 * (the Streamable HTTP transport answers 404 to an unknown session; the client starts a new one).
 */
export function sessionNotFoundResponse(): Response {
  return jsonRpcErrorResponse(404, ErrorCodes.SESSION_NOT_FOUND, 'Session not found');
}
