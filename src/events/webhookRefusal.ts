import { ErrorCodes, RpcError } from '../rpc/index.js';
import { WebhookError, type WebhookErrorKind } from './webhooks/WebhookError.js';

/** Each webhook refusal's code (EVENTS-SPEC §9): the one place a WebhookError kind meets the wire. */
const CODES: Record<WebhookErrorKind, number> = {
  invalid_params: ErrorCodes.INVALID_PARAMS,
  forbidden: ErrorCodes.EVENTS_FORBIDDEN,
  not_found: ErrorCodes.EVENTS_NOT_FOUND,
  resource_exhausted: ErrorCodes.EVENTS_RESOURCE_EXHAUSTED,
  callback_endpoint_error: ErrorCodes.EVENTS_CALLBACK_ENDPOINT_ERROR,
};

/** Runs a webhook operation; a WebhookError is answered with its code and `data` as they are (spec V106). */
export async function webhookRefusal<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof WebhookError) throw new RpcError(CODES[error.kind], error.message, error.data);
    throw error;
  }
}
