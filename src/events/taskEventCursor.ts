import { ErrorCodes, RpcError } from '../rpc/index.js';

const PREFIX = 'e1.';

/**
 * A position in one task's event log, as the opaque cursor the wire carries (spec V23): the task and the `seq` of the
 * next entry. The log never drops entries while the task exists, so a cursor stays valid for the task's life, across
 * restarts and across instances sharing the store (EVENTS-SPEC §12).
 */
export function encodeTaskEventCursor(taskId: string, seq: number): string {
  return PREFIX + Buffer.from(JSON.stringify([taskId, seq])).toString('base64url');
}

/** The `seq` a cursor of `taskId`'s log points at; a cursor that does not parse, or is another task's, is -32602. */
export function decodeTaskEventCursor(cursor: string, taskId: string): number {
  let decoded: unknown;
  try {
    decoded = cursor.startsWith(PREFIX)
      ? JSON.parse(Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString('utf8'))
      : undefined;
  } catch {
    decoded = undefined;
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== 2 ||
    decoded[0] !== taskId ||
    !Number.isSafeInteger(decoded[1]) ||
    (decoded[1] as number) < 0
  )
    throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: the cursor is not a cursor of this subscription');
  return decoded[1] as number;
}
