import { OutcomeUnknownError } from '../../engine/index.js';
import { NotConnectedError } from './waitForConnection.js';

/**
 * A failed write as the engine must read it: refused by the server (a SQLSTATE outside connection loss and shutdown)
 * or never sent, it was not applied; anything else (the connection dropped, the server shut down mid-statement) may
 * have been applied after all: OutcomeUnknownError.
 */
export function pgWriteFailure(error: unknown): unknown {
  if (error instanceof NotConnectedError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|57P)/.test(code)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new OutcomeUnknownError(message, { cause: error });
}
