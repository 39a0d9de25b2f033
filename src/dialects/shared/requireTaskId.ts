import { ErrorCodes, RpcError } from '../../rpc/index.js';

/** `params.taskId` as a non-empty string (spec R39: the param is authoritative), or a -32602 error. */
export function requireTaskId(params: Record<string, unknown> | undefined): string {
  const taskId = params?.['taskId'];
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > 256) {
    throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: taskId must be a non-empty string');
  }
  return taskId;
}
