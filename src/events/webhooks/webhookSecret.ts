import { randomBytes } from 'node:crypto';

import { WebhookError } from './WebhookError.js';

const PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The signing key of a `whsec_` secret: the base64-decoded bytes after the prefix, 24–64 of them (spec V61, V84: the
 * key is never the literal string). Anything else is refused as `invalid_params`.
 */
export function webhookKeyOf(secret: unknown): Buffer {
  if (typeof secret !== 'string' || !secret.startsWith(PREFIX))
    throw new WebhookError('invalid_params', 'delivery.secret must be "whsec_" followed by base64');
  const encoded = secret.slice(PREFIX.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded))
    throw new WebhookError('invalid_params', 'delivery.secret must be "whsec_" followed by base64');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < 24 || key.length > 64)
    throw new WebhookError('invalid_params', `delivery.secret must decode to 24–64 bytes (got ${key.length})`);
  return key;
}

/** A fresh secret for a subscription, from the CSPRNG: what a client passes as `delivery.secret`. */
export function generateWebhookSecret(bytes = 32): string {
  return PREFIX + randomBytes(bytes).toString('base64');
}
