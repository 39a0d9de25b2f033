import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';

import {
  TaskClientError,
  TaskConnectionError,
  TaskProtocolError,
  TaskRpcError,
  type RpcErrorObject,
} from './TaskClientError.js';

/** The SDK prefixes server messages with "MCP error <code>: "; callers want the server's own words. */
function serverMessage(error: ProtocolError): string {
  return error.message.replace(/^MCP error -?\d+: /, '');
}

export function rpcErrorOf(error: ProtocolError): RpcErrorObject {
  return { code: error.code, message: serverMessage(error), ...(error.data !== undefined && { data: error.data }) };
}

/** Maps SDK and transport failures onto the client's typed errors; anything unexpected is kept as the cause. */
export function toTaskClientError(error: unknown): TaskClientError {
  if (error instanceof TaskClientError) return error;
  if (error instanceof ProtocolError) return new TaskRpcError(rpcErrorOf(error));
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.InvalidResult || error.code === SdkErrorCode.UnsupportedResultType) {
      return new TaskProtocolError(error.message, { cause: error });
    }
    return new TaskConnectionError(`${error.code}: ${error.message}`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TaskConnectionError(message, { cause: error });
}
