import type { WebhookFailure } from './WebhookFailure.js';

/**
 * What a host learns of its endpoint's health (EVENTS-SPEC §7.1 `deliveryStatus`). Timestamps are ISO 8601; `lastError`
 * is a category only, never what the endpoint answered (spec V94).
 */
export interface DeliveryStatus {
  active: boolean;
  lastDeliveryAt: string | null;
  lastError: WebhookFailure | null;
  failedSince: string | null;
  throttled: boolean;
  retryAfterMs: number;
}

/** The identity of a webhook subscription (spec V66): immutable, the principal from auth, never a client-chosen id. */
export interface WebhookKey {
  /** The authenticated principal; `undefined` is refused with `forbidden` (spec V63). */
  owner: string | undefined;
  name: string;
  /** Compared as canonical JSON. */
  arguments: Record<string, unknown>;
  url: string;
}

/** `events/subscribe` with webhook delivery, after the events layer has checked the type, mode and arguments. */
export interface WebhookSubscribeInput extends WebhookKey {
  /** `whsec_` + base64 of 24–64 bytes, chosen by the client (spec V61); replaced on refresh (spec V71). */
  secret: string;
  /** Omitted: the default grant; `null`: no expiry asked for (spec V75, V78); a number is clamped, never refused. */
  ttlMs?: number | null;
  /**
   * Narrows the subscription to events published with the same scope (a task-scoped type: the task id). `null` or
   * omitted: every event of the type that the owner may see.
   */
  scope?: string | null;
  /**
   * The position the events layer resolved for this subscribe ("now" for a null cursor, or the replay point). The
   * result's `cursor` is this while nothing is in flight, else the watermark of what is (spec V73, V86).
   */
  cursor: string | null;
  /** The events layer skipped events resolving the cursor (retention, `maxAgeMs`): passed through (spec V33). */
  truncated?: boolean;
}

/** The `events/subscribe` result body, without `resultType`. */
export interface WebhookSubscribeResult {
  /** `sub_` + a digest of the key: stable across refreshes and restarts (spec V69). */
  id: string;
  /** ISO 8601, or `null` only when `ttlMs: null` was asked for and granted (spec V78). */
  refreshBefore: string | null;
  cursor: string | null;
  truncated: boolean;
  deliveryStatus: DeliveryStatus;
  /** True when this call created the subscription (a replay from `cursor` is then due), false on a refresh. */
  created: boolean;
}

/** An event occurrence as the events layer publishes it (EVENTS-SPEC §4), without its `cursor`. */
export interface WebhookOccurrence {
  eventId: string;
  name: string;
  timestamp: string;
  data: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** One event offered to the webhook subscriptions of its type. */
export interface WebhookEvent {
  occurrence: WebhookOccurrence;
  /** Who may receive it: a principal (a task's owner), or `null` for an event every subscriber of the type may see. */
  owner: string | null;
  /** Matched against a subscription's `scope` (a task id); a subscription without a scope takes every scope. */
  scope?: string | null;
  /** The position after this event; delivered as the body's `cursor` once everything before it is settled (V86). */
  cursor: string | null;
}

/** The nested error of a `terminated` envelope (spec V110, EVENTS-SPEC §16.4). */
export interface TerminationError {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** What happened to one delivery, for metrics. */
export type WebhookDeliveryOutcome = 'delivered' | 'failed' | 'abandoned' | 'suspended';

/**
 * Webhook delivery of the Events extension (EVENTS-SPEC §7, §13): subscriptions and a durable outbox in the task
 * store, so deliveries survive a crash of the delivering process and every instance sharing the store delivers each
 * event once. Owner-scoped throughout: a principal sees, refreshes and removes only its own subscriptions, and a
 * subscription carries only events its owner may see.
 *
 * Errors are `WebhookError`s; the events layer maps their `kind` to the extension's codes.
 */
export interface WebhookDeliveries {
  /**
   * Creates or refreshes (spec V68) the subscription of `input`'s key: validates the URL (https, SSRF) and the secret,
   * runs the verification handshake for an unverified `(owner, url)` before answering (spec V100–V103), grants the
   * TTL, rotates the secret (the old one still signs for a short grace, V72) and reactivates a suspended subscription.
   */
  subscribe(input: WebhookSubscribeInput): Promise<WebhookSubscribeResult>;
  /** Removes the owner's subscription of that key and its queued deliveries at once; `not_found` when none (V108, V109). */
  unsubscribe(key: WebhookKey): Promise<void>;
  /**
   * Queues `event` for every live subscription of its type that may see it (owner, scope); resolves once the rows are
   * durable in the store. Returns how many subscriptions it was queued for. A full queue drops the event for that
   * subscription and queues one `gap` envelope instead.
   */
  publish(event: WebhookEvent): Promise<number>;
  /** Queues events for one of the owner's subscriptions only (a replay from its cursor after `subscribe`). */
  publishTo(owner: string, id: string, events: readonly WebhookEvent[]): Promise<number>;
  /** Sends a signed `gap` envelope with a fresh cursor to that subscription (EVENTS-SPEC §7.5). */
  gap(id: string, cursor: string | null): Promise<boolean>;
  /**
   * Ends subscriptions with a signed `terminated` envelope: one by id, or every subscription of a type (optionally of
   * one scope, e.g. a task that reached a terminal status, spec TS8). They no longer exist afterwards.
   */
  terminate(which: { id: string } | { name: string; scope?: string }, error: TerminationError): Promise<number>;
  /** `active`, `suspended` or `absent`; another owner's subscription reads as `absent`. */
  state(owner: string | undefined, id: string): Promise<'active' | 'suspended' | 'absent'>;
  /** The owner's subscriptions (for the console); another owner's are invisible. */
  list(owner: string): Promise<WebhookSubscriptionView[]>;
  /** Starts the delivery loop of this process (claims due outbox rows). */
  start(): void;
  /** Stops claiming; waits for the deliveries in flight. */
  stop(): Promise<void>;
}

/** A subscription as its owner may see it. */
export interface WebhookSubscriptionView {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  url: string;
  scope: string | null;
  refreshBefore: string | null;
  deliveryStatus: DeliveryStatus;
  /** Deliveries waiting or in flight. */
  queued: number;
}
