import type { JsonRpcErrorObject } from '../../engine/index.js';

/** A dialect's answer to one request: a JSON-RPC result or a JSON-RPC error. */
export type DialectAnswer = { result: Record<string, unknown> } | { error: JsonRpcErrorObject };

export function answerError(code: number, message: string, data?: unknown): DialectAnswer {
  return { error: { code, message, ...(data !== undefined && { data }) } };
}
