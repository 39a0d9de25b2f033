/**
 * Why a webhook operation was refused, in the terms of the Events error table (EVENTS-SPEC §9). The layer that
 * answers `events/*` maps `kind` to its code in one place; `data` goes on the wire as it is and never carries what an
 * endpoint answered (spec V106).
 */
export type WebhookErrorKind =
  /** -32602: a malformed or refused URL, a bad secret (spec V61, V62, V97). */
  | 'invalid_params'
  /** -32012: no authenticated principal (spec V63). */
  | 'forbidden'
  /** -32011: no subscription under that key for this principal (spec V109). */
  | 'not_found'
  /** -32013: a bound was reached; `data.limit` names it (spec V115). */
  | 'resource_exhausted'
  /** -32015: the endpoint failed verification or could not be reached; `data.reason` is the category (spec V102). */
  | 'callback_endpoint_error';

export class WebhookError extends Error {
  override readonly name = 'WebhookError';

  constructor(
    readonly kind: WebhookErrorKind,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}
