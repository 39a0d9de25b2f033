import { randomBytes, timingSafeEqual } from 'node:crypto';

import { postWebhook } from './postWebhook.js';
import { webhookHeaders } from './signWebhook.js';
import type { WebhookFailure } from './WebhookFailure.js';

/**
 * The verification handshake (spec V100, V101): a signed `verification` envelope with a single-use nonce, sent on the
 * same SSRF-guarded path as deliveries (V105); the endpoint confirms by answering 2xx with `{"challenge": nonce}`,
 * compared in constant time. Resolves `undefined` when confirmed, else the failure's category only (V102, V106).
 */
export async function verifyEndpoint(
  url: URL,
  key: Buffer,
  subscriptionId: string,
  open: boolean,
  timeoutMs: number,
): Promise<WebhookFailure | undefined> {
  const nonce = randomBytes(24).toString('base64url');
  const body = JSON.stringify({ type: 'verification', challenge: nonce });
  const id = `msg_verification_${randomBytes(12).toString('hex')}`;
  const outcome = await postWebhook(url, webhookHeaders([key], id, body, subscriptionId), body, open, timeoutMs);
  if (!outcome.ok) return outcome.failure ?? 'connection_refused';
  let echoed: unknown;
  try {
    echoed = (JSON.parse(outcome.body ?? '') as { challenge?: unknown }).challenge;
  } catch {
    return 'challenge_failed';
  }
  if (typeof echoed !== 'string') return 'challenge_failed';
  const given = Buffer.from(echoed);
  const expected = Buffer.from(nonce);
  return given.length === expected.length && timingSafeEqual(given, expected) ? undefined : 'challenge_failed';
}
