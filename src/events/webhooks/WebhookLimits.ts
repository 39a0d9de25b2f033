/**
 * The bounds of webhook delivery (docs/limits.md, docs/webhooks.md). Every one has a default and a refusal or an
 * effect on the wire.
 */
export interface WebhookLimits {
  /** Subscriptions one principal may hold; one more is `-32013` with `data.limit: "webhookSubscriptions"` (V115). */
  subscriptionsPerOwner: number;
  /** Event deliveries waiting per subscription; past it an event is skipped and a `gap` envelope queued instead. */
  queuedPerSubscription: number;
  /** The grant when `ttlMs` is omitted (spec V75). */
  defaultTtlMs: number;
  /** A shorter `ttlMs` is raised to this (spec V76: clamped, never refused, V77). */
  minTtlMs: number;
  /** A longer `ttlMs` is lowered to this; also the grant for `ttlMs: null` when `allowNoExpiry` is false. */
  maxTtlMs: number;
  /** Whether `ttlMs: null` is granted as no expiry (spec V78, V80). */
  allowNoExpiry: boolean;
  /** Attempts per delivery before it is abandoned (spec V87, V88). */
  maxAttempts: number;
  /** The wait before each retry: the n-th entry after the n-th failed attempt (the last one repeats). */
  retryDelaysMs: readonly number[];
  /** How long one POST may take (spec V92). */
  timeoutMs: number;
  /** How long a claim holds a row; a process that dies mid-delivery loses its rows to others after it. */
  leaseMs: number;
  /** Deliveries in flight per process. */
  concurrency: number;
  /** How often an idle process looks for due rows (rows published in the same process are sent at once). */
  pollMs: number;
  /** The largest body sent (spec V90); a larger event is skipped and a `gap` envelope queued instead. */
  maxBodyBytes: number;
  /** Verification POSTs per destination host per minute, from one process (spec V105); past it `-32013`. */
  verificationsPerHostPerMinute: number;
  /** How long the replaced secret still signs after a refresh rotates it (spec V72). */
  secretGraceMs: number;
  /** Suspension (spec V93): over a rolling window, at least this many attempts ... */
  suspendAfterAttempts: number;
  /** ... of which more than this share failed, suspend the subscription until a refresh. */
  suspendFailureRatio: number;
  suspendWindowMs: number;
}

export const DEFAULT_WEBHOOK_LIMITS: Readonly<WebhookLimits> = Object.freeze({
  subscriptionsPerOwner: 100,
  queuedPerSubscription: 1000,
  defaultTtlMs: 60 * 60_000,
  minTtlMs: 60_000,
  maxTtlMs: 24 * 60 * 60_000,
  allowNoExpiry: true,
  maxAttempts: 5,
  // ~1 s first, as the conformance suite looks for a retry within ~5 s; all five attempts within ~6.5 min (V88).
  retryDelaysMs: Object.freeze([1_000, 10_000, 60_000, 300_000]),
  timeoutMs: 5_000,
  leaseMs: 30_000,
  concurrency: 16,
  pollMs: 250,
  maxBodyBytes: 256 * 1024,
  verificationsPerHostPerMinute: 10,
  secretGraceMs: 5 * 60_000,
  suspendAfterAttempts: 100,
  suspendFailureRatio: 0.95,
  suspendWindowMs: 60 * 60_000,
});
