import type { CallToolResult } from '@modelcontextprotocol/client';

import type { TaskSnapshot } from './TaskSnapshot.js';

/** A JSON-RPC error object exactly as the server sent it. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Base class of every error the task client raises; `kind` is stable for programmatic checks. */
export class TaskClientError extends Error {
  constructor(
    readonly kind: 'rpc' | 'not-found' | 'failed' | 'cancelled' | 'not-supported' | 'connection' | 'protocol' | 'input',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The server answered with a JSON-RPC error. */
export class TaskRpcError extends TaskClientError {
  readonly code: number;
  readonly data: unknown;

  constructor(
    readonly error: RpcErrorObject,
    kind: 'rpc' | 'not-found' = 'rpc',
  ) {
    super(kind, error.message);
    this.code = error.code;
    this.data = error.data;
  }
}

/** `-32602` for a task id the server does not know (never existed, expired, deleted or someone else's; spec R57). */
export class TaskNotFoundError extends TaskRpcError {
  constructor(
    readonly taskId: string,
    error: RpcErrorObject,
  ) {
    super(error, 'not-found');
  }
}

/**
 * The task ended without a usable result. Carries what the server stored: the JSON-RPC error of the underlying
 * request, or the tool result (`isError: true`), so callers never see a generic "task failed".
 */
export class TaskFailedError extends TaskClientError {
  constructor(
    message: string,
    readonly snapshot: TaskSnapshot,
    readonly error?: RpcErrorObject,
    readonly result?: CallToolResult,
  ) {
    super('failed', message);
  }
}

/** The task ended `cancelled`. */
export class TaskCancelledError extends TaskClientError {
  constructor(readonly snapshot: TaskSnapshot) {
    super('cancelled', snapshot.statusMessage ?? 'The task was cancelled');
  }
}

/** The server (or the dialect in use) does not offer the operation: a missing capability or `taskSupport` rule. */
export class TaskNotSupportedError extends TaskClientError {
  constructor(
    readonly feature: string,
    message: string,
  ) {
    super('not-supported', message);
  }
}

/** The transport failed: could not connect, the connection closed, or a request got no answer in time. */
export class TaskConnectionError extends TaskClientError {
  constructor(message: string, options?: ErrorOptions) {
    super('connection', message, options);
  }
}

/** A mid-task input request could not be answered (no handler for it, or the handler threw). */
export class TaskInputError extends TaskClientError {
  constructor(message: string, options?: ErrorOptions) {
    super('input', message, options);
  }
}

/** The server's answer does not match the wire format of the dialect in use. */
export class TaskProtocolError extends TaskClientError {
  constructor(message: string, options?: ErrorOptions) {
    super('protocol', message, options);
  }
}
