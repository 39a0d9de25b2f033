import type { JsonRpcErrorObject } from '../engine/index.js';

/** A protocol error with its JSON-RPC code, thrown by dialects and answered as-is. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  toJson(): JsonRpcErrorObject {
    return { code: this.code, message: this.message, ...(this.data !== undefined && { data: this.data }) };
  }
}
