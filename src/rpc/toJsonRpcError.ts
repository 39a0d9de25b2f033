import {
  ExecutorUnavailableError,
  InvalidCursorError,
  InvalidTransitionError,
  StoreUnavailableError,
  TaskConflictError,
  TaskExpiredError,
  TaskLimitError,
  TaskNotFoundError,
  TaskTerminalError,
  TaskTooLargeError,
  TaskTooDeepError,
  type JsonRpcErrorObject,
} from '../engine/index.js';
import { ErrorCodes } from '../protocol/index.js';
import { OperationFailed } from './OperationFailed.js';
import { RpcError } from './RpcError.js';
import type { TaskOperation } from './TaskOperation.js';

const VERB: Record<TaskOperation, string> = {
  retrieve: 'Failed to retrieve task',
  cancel: 'Cannot cancel task',
  update: 'Cannot update task',
  delete: 'Cannot delete task',
  list: 'Failed to list tasks',
  create: 'Cannot create task',
};

/**
 * The single mapping from engine errors to JSON-RPC errors (spec R57–R60). A missing, foreign or expired task is
 * -32602 with the same message for the first two, so other owners learn nothing (spec R67).
 */
export function toJsonRpcError(error: unknown, operation: TaskOperation = 'retrieve'): JsonRpcErrorObject {
  if (error instanceof OperationFailed) return toJsonRpcError(error.error, error.operation);
  if (error instanceof RpcError) return error.toJson();
  const verb = VERB[operation];
  if (error instanceof TaskNotFoundError)
    return { code: ErrorCodes.INVALID_PARAMS, message: `${verb}: Task not found` };
  if (error instanceof TaskExpiredError)
    return { code: ErrorCodes.INVALID_PARAMS, message: `${verb}: Task has expired` };
  if (error instanceof TaskTerminalError) {
    // spec R49
    return { code: ErrorCodes.INVALID_PARAMS, message: `${verb}: already in terminal status '${error.status}'` };
  }
  if (error instanceof InvalidTransitionError)
    return { code: ErrorCodes.INVALID_PARAMS, message: `${verb}: ${error.message}` };
  if (error instanceof TaskConflictError)
    return { code: ErrorCodes.INVALID_PARAMS, message: `${verb}: ${error.message}` };
  // spec R58
  if (error instanceof InvalidCursorError)
    return { code: ErrorCodes.INVALID_PARAMS, message: `${verb}: ${error.message}` };
  if (error instanceof TaskTooLargeError) {
    return {
      code: ErrorCodes.INVALID_PARAMS,
      message: `${verb}: ${error.message}`,
      data: { limit: error.what === 'arguments' ? 'arguments_size' : 'input_size', maxBytes: error.maxBytes },
    };
  }
  if (error instanceof TaskTooDeepError) {
    return {
      code: ErrorCodes.INVALID_PARAMS,
      message: `Invalid params: ${error.message}`,
      data: { limit: 'json_depth', maxDepth: error.maxDepth },
    };
  }
  if (error instanceof TaskLimitError) {
    return {
      code: ErrorCodes.INVALID_REQUEST,
      message: `${verb}: ${error.message}`,
      data: { limit: error.limit, ...error.details },
    };
  }
  if (error instanceof ExecutorUnavailableError) {
    return {
      code: ErrorCodes.INTERNAL_ERROR,
      message: `Internal error: the task could not be queued for a worker; it was not created`,
    };
  }
  // spec R59: internal failures are -32603 and say what failed, not how.
  if (error instanceof StoreUnavailableError) {
    // Said when known, as the rest is: what failed, and that nothing was stored (trying again is safe).
    const message =
      error.reason === 'disk_full'
        ? "Internal error: the task store's disk is full; nothing was stored"
        : error.reason === 'not_created'
          ? 'Internal error: the task store or the job queue did not answer in time; the task was not created'
          : error.reason === 'not_confirmed'
            ? 'Internal error: the task store lost the connection while storing the task; the task was not created'
            : 'Internal error: the task store is unavailable';
    return { code: ErrorCodes.INTERNAL_ERROR, message };
  }
  return { code: ErrorCodes.INTERNAL_ERROR, message: 'Internal error' };
}
