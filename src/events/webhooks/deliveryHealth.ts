import type { WebhookSubscriptionStatus } from '../../engine/index.js';
import type { DeliveryStatus } from './WebhookDeliveries.js';
import type { WebhookFailure } from './WebhookFailure.js';
import type { WebhookLimits } from './WebhookLimits.js';

type SuspensionLimits = Pick<WebhookLimits, 'suspendAfterAttempts' | 'suspendFailureRatio' | 'suspendWindowMs'>;

/**
 * The subscription's health after one attempt: last delivery or error, since when it fails, and the rolling window
 * that suspends it after sustained failure (spec V93: more than 95 % of at least 100 attempts in 60 minutes).
 */
export function afterAttempt(
  status: WebhookSubscriptionStatus,
  failure: WebhookFailure | undefined,
  now: number,
  limits: SuspensionLimits,
): WebhookSubscriptionStatus {
  const fresh = now - status.windowStart >= limits.suspendWindowMs;
  const next: WebhookSubscriptionStatus = {
    ...status,
    windowStart: fresh ? now : status.windowStart,
    windowAttempts: (fresh ? 0 : status.windowAttempts) + 1,
    windowFailures: (fresh ? 0 : status.windowFailures) + (failure ? 1 : 0),
  };
  if (!failure) return { ...next, lastDeliveryAt: now, lastError: null, failedSince: null };
  next.lastError = failure;
  next.failedSince = status.failedSince ?? now;
  if (
    next.windowAttempts >= limits.suspendAfterAttempts &&
    next.windowFailures / next.windowAttempts > limits.suspendFailureRatio
  )
    next.active = false;
  return next;
}

/** A refresh reactivates a suspended subscription with a fresh window (spec V71). */
export function reactivated(status: WebhookSubscriptionStatus, now: number): WebhookSubscriptionStatus {
  if (status.active) return status;
  return { ...status, active: true, windowStart: now, windowAttempts: 0, windowFailures: 0 };
}

/** What the owner sees (EVENTS-SPEC §7.1 `deliveryStatus`): ISO timestamps, the category only (V94). */
export function deliveryStatusOf(status: WebhookSubscriptionStatus): DeliveryStatus {
  const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());
  return {
    active: status.active,
    lastDeliveryAt: iso(status.lastDeliveryAt),
    lastError: status.lastError as WebhookFailure | null,
    failedSince: iso(status.failedSince),
    throttled: false,
    retryAfterMs: 0,
  };
}
