import { ErrorCodes, isObject } from '../protocol/index.js';
import { isRequestId, type JsonRpcErrorResponse } from './JsonRpc.js';

/**
 * Checks one decoded JSON value against the JSON-RPC 2.0 message shapes MCP uses. Returns the error response to send
 * for an invalid one (with the request id when it can be read, else null), or undefined when the message is valid.
 */
export function validateMessage(value: unknown): JsonRpcErrorResponse | undefined {
  const fail = (code: number, message: string, id: unknown = null): JsonRpcErrorResponse => ({
    jsonrpc: '2.0',
    id: isRequestId(id) ? id : null,
    error: { code, message },
  });
  if (!isObject(value))
    return fail(ErrorCodes.INVALID_REQUEST, 'Invalid Request: a JSON-RPC message must be an object');
  const id = value['id'];
  if (value['jsonrpc'] !== '2.0') return fail(ErrorCodes.INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"', id);
  if ('method' in value) {
    if (typeof value['method'] !== 'string')
      return fail(ErrorCodes.INVALID_REQUEST, 'Invalid Request: method must be a string', id);
    if ('id' in value && !isRequestId(id))
      return fail(ErrorCodes.INVALID_REQUEST, 'Invalid Request: id must be a string or a number');
    if (value['params'] !== undefined && !isObject(value['params'])) {
      return fail(ErrorCodes.INVALID_PARAMS, 'Invalid params: params must be an object', id);
    }
    return undefined;
  }
  if (('result' in value || 'error' in value) && (isRequestId(id) || id === null)) return undefined;
  return fail(ErrorCodes.INVALID_REQUEST, 'Invalid Request: neither a request, a notification nor a response', id);
}
