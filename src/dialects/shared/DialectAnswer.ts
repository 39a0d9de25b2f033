import type { JsonRpcErrorObject } from '../../engine/index.js';

/**
 * A dialect's answer to one request: a JSON-RPC result, a JSON-RPC error, or nothing at all (a request the requestor
 * cancelled gets no response).
 */
export type DialectAnswer = { result: Record<string, unknown> } | { error: JsonRpcErrorObject } | { noResponse: true };

export function answerError(code: number, message: string, data?: unknown): DialectAnswer {
  return { error: { code, message, ...(data !== undefined && { data }) } };
}
