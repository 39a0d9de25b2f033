import type { OutboxRow, StoredWebhookSubscription } from '../engine/index.js';

/** One delivery of a webhook subscription as the console shows it: never its body or its signing secrets. */
export interface DeliveryView {
  seq: number;
  kind: OutboxRow['kind'];
  attempts: number;
  /** The receiver's HTTP status or the failure of the last attempt; null before the first. */
  lastStatus: string | null;
  /** When the next attempt is due (a claimed row: when its claim lapses); null once done. */
  nextAttemptAt: number | null;
  /** Claimed by a sender now. */
  inFlight: boolean;
  done: boolean;
}

/** A webhook subscription as the console shows it: what it delivers, where, and how delivery goes. */
export interface SubscriptionView {
  id: string;
  owner: string;
  /** The event type delivered. */
  name: string;
  url: string;
  /** The task whose events it takes; null: any of its owner's. */
  scope: string | null;
  createdAt: number;
  expiresAt: number | null;
  verified: boolean;
  active: boolean;
  lastDeliveryAt: number | null;
  lastError: string | null;
  failedSince: number | null;
  /** Deliveries not yet done. */
  queued: number;
  /** Deliveries still in the outbox, oldest first, at most MAX_DELIVERIES_SHOWN (done ones leave it). */
  deliveries: DeliveryView[];
}

/** Deliveries listed per subscription. */
export const MAX_DELIVERIES_SHOWN = 50;

/** `shown`: how many of its deliveries to list (the subscriptions page lists none). */
export function subscriptionView(
  stored: StoredWebhookSubscription,
  rows: readonly OutboxRow[],
  shown = MAX_DELIVERIES_SHOWN,
): SubscriptionView {
  const { record, status } = stored;
  return {
    id: record.id,
    owner: record.owner,
    name: record.name,
    url: record.url,
    scope: record.scope,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    verified: record.verified,
    active: status.active,
    lastDeliveryAt: status.lastDeliveryAt,
    lastError: status.lastError,
    failedSince: status.failedSince,
    queued: rows.filter((row) => !row.done).length,
    deliveries: rows.slice(0, shown).map((row) => ({
      seq: row.seq,
      kind: row.kind,
      attempts: row.attempts,
      lastStatus: row.lastStatus,
      nextAttemptAt: row.done ? null : row.dueAt,
      inFlight: !row.done && row.token !== null,
      done: row.done,
    })),
  };
}
