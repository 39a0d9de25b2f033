import { createHmac } from 'node:crypto';

/**
 * The `webhook-signature` value: `v1,<base64 HMAC-SHA256 over id.timestamp.body>` for each key, space-separated
 * (spec V84; several while a rotated secret is in its grace, V72). `body` is the exact bytes sent.
 */
export function signWebhook(keys: readonly Buffer[], id: string, timestamp: number, body: string | Buffer): string {
  return keys
    .map((key) => {
      const hmac = createHmac('sha256', key);
      hmac.update(`${id}.${timestamp}.`);
      hmac.update(body);
      return `v1,${hmac.digest('base64')}`;
    })
    .join(' ');
}

/** The Standard Webhooks headers of one attempt (spec V82, V83); each attempt signs anew (spec V85). */
export function webhookHeaders(
  keys: readonly Buffer[],
  id: string,
  body: string,
  subscriptionId: string,
  now = Date.now(),
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(keys, id, timestamp, body),
    'x-mcp-subscription-id': subscriptionId,
  };
}
