import type { WebhookLimits } from './WebhookLimits.js';

/**
 * The grant for a requested `ttlMs` (EVENTS-SPEC §7.3): omitted or not a number is the default (V75), a number is
 * clamped into the bounds and never refused (V76, V77), `null` is no expiry when the operator allows it and the longest
 * grant otherwise (V78). Returns the expiry in epoch ms, `null` for none.
 */
export function grantTtl(
  ttlMs: unknown,
  now: number,
  limits: Pick<WebhookLimits, 'defaultTtlMs' | 'minTtlMs' | 'maxTtlMs' | 'allowNoExpiry'>,
): number | null {
  if (ttlMs === null) return limits.allowNoExpiry ? null : now + limits.maxTtlMs;
  if (typeof ttlMs !== 'number' || !Number.isFinite(ttlMs)) return now + limits.defaultTtlMs;
  return now + Math.min(limits.maxTtlMs, Math.max(limits.minTtlMs, Math.floor(ttlMs)));
}
