import { timingSafeEqual } from 'node:crypto';

import { signWebhook } from './signWebhook.js';
import { webhookKeyOf } from './webhookSecret.js';

/** Headers as Node (`IncomingHttpHeaders`), the Fetch API (`Headers`) or a plain object give them. */
export type WebhookHeaderSource =
  { get(name: string): string | null } | Record<string, string | readonly string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300, as Standard Webhooks). */
  toleranceSeconds?: number;
  /** The clock, in epoch ms. */
  now?: number;
}

export interface VerifiedWebhook {
  /** `webhook-id`: the `eventId`, or `msg_<type>_<random>` for an envelope; dedup on it (stable across retries). */
  id: string;
  /** `webhook-timestamp`, Unix seconds. */
  timestamp: number;
  /** `X-MCP-Subscription-Id`, when sent. */
  subscriptionId: string | undefined;
  /** The parsed body: an `EventOccurrence`, or a control envelope when it has a top-level `type` (spec V95). */
  payload: unknown;
}

/** A delivery that does not verify: not signed with this secret, stale, or malformed. Answer it with 4xx. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

function header(headers: WebhookHeaderSource, name: string): string | undefined {
  if (typeof headers.get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | readonly string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? (value as readonly string[]).join(' ') : (value as string | undefined);
}

/**
 * Verifies a webhook delivery as a host receives it (Standard Webhooks; EVENTS-SPEC §7.4, §13): the HMAC-SHA256 of
 * `webhook-id.webhook-timestamp.body` under the `whsec_` secret, compared in constant time with each `v1,` signature
 * of `webhook-signature` (any one may match: the server signs with old and new secret during a rotation), and a
 * timestamp within the tolerance (replays of old deliveries fail). `body` must be the raw bytes received.
 */
export function verifyWebhook(
  headers: WebhookHeaderSource,
  body: string | Buffer,
  secret: string,
  options: VerifyWebhookOptions = {},
): VerifiedWebhook {
  const key = webhookKeyOf(secret);
  const id = header(headers, 'webhook-id');
  const stamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !stamp || !signatures) throw new WebhookVerificationError('Missing required headers');
  if (!/^\d+$/.test(stamp)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  const timestamp = Number(stamp);
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (now - timestamp > tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (timestamp - now > tolerance) throw new WebhookVerificationError('Message timestamp too new');
  const expected = Buffer.from(signWebhook([key], id, timestamp, body).slice(3), 'base64');
  const matches = signatures.split(' ').some((entry) => {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('No matching signature found');
  let payload: unknown;
  try {
    payload = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('The body is not JSON');
  }
  return { id, timestamp, subscriptionId: header(headers, 'x-mcp-subscription-id'), payload };
}
