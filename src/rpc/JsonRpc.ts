/** JSON-RPC 2.0 message shapes as they appear on the wire, independent of any SDK version. */
import { isObject } from '../protocol/index.js';

export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  id?: never;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcResultResponse {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}

export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}

export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

export function isJsonRpcRequest(message: unknown): message is JsonRpcRequest {
  return isObject(message) && typeof message['method'] === 'string' && 'id' in message && isRequestId(message['id']);
}

export function isJsonRpcNotification(message: unknown): message is JsonRpcNotification {
  return isObject(message) && typeof message['method'] === 'string' && !('id' in message);
}

export function isJsonRpcResponse(message: unknown): message is JsonRpcResponse {
  return isObject(message) && !('method' in message) && 'id' in message && ('result' in message || 'error' in message);
}

export function isJsonRpcErrorResponse(message: unknown): message is JsonRpcErrorResponse {
  return isJsonRpcResponse(message) && 'error' in message;
}

/** Params as an object: absent params read as `{}`; anything else (an array, a string) is not an object. */
export function paramsOf(message: { params?: unknown }): Record<string, unknown> | undefined {
  if (message.params === undefined) return {};
  return isObject(message.params) ? message.params : undefined;
}
