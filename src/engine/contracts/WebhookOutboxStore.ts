/**
 * A webhook subscription as stored (EVENTS-SPEC §7): the immutable key, the secrets that sign its deliveries (the
 * current one first, then one still in its rotation grace until `until`), the grant and whether the endpoint was
 * verified for this `(owner, url)`.
 */
export interface WebhookSubscriptionRecord {
  id: string;
  owner: string;
  name: string;
  url: string;
  /** The subscription's `arguments` as canonical JSON. */
  arguments: string;
  scope: string | null;
  secrets: Array<{ secret: string; until?: number }>;
  /** Epoch ms after which it is gone; `null`: no expiry. */
  expiresAt: number | null;
  createdAt: number;
  verified: boolean;
}

/** Delivery health, updated after attempts, apart from the record so a refresh and an attempt never overwrite each other. */
export interface WebhookSubscriptionStatus {
  active: boolean;
  lastDeliveryAt: number | null;
  lastError: string | null;
  failedSince: number | null;
  /** The rolling window for suspension: its start and the attempts and failures in it. */
  windowStart: number;
  windowAttempts: number;
  windowFailures: number;
}

/** A new subscription's delivery health when none is given: active, nothing attempted yet. */
export function initialWebhookStatus(at: number): WebhookSubscriptionStatus {
  return {
    active: true,
    lastDeliveryAt: null,
    lastError: null,
    failedSince: null,
    windowStart: at,
    windowAttempts: 0,
    windowFailures: 0,
  };
}

export interface StoredWebhookSubscription {
  record: WebhookSubscriptionRecord;
  status: WebhookSubscriptionStatus;
  /** The highest settled position with nothing unsettled before it (spec V86); only moves forward. */
  watermark: { seq: number; cursor: string | null } | null;
  /**
   * Once the subscription was ended (`endSubscription`): the `seq` of its `terminated` row. It takes no new rows then,
   * delivers those it holds, and is removed as that row is claimed.
   */
  ending: number | null;
}

/** One delivery to make: an event or a control envelope. */
export interface OutboxEntry {
  subscriptionId: string;
  /** `webhook-id`: the same on every attempt (Standard Webhooks). */
  webhookId: string;
  kind: 'event' | 'gap' | 'terminated';
  /** The JSON body without its `cursor` (set per attempt as the watermark allows). */
  body: string;
  cursor: string | null;
  /** When the next attempt is due (epoch ms). */
  dueAt: number;
  /** For `terminated`: where and with what to sign, as the subscription is gone by then. */
  target?: { url: string; secrets: string[] };
}

export interface OutboxRow extends OutboxEntry {
  /** Store-wide increasing: the order of deliveries within a subscription. */
  seq: number;
  attempts: number;
  lastStatus: string | null;
  /** The claim holding the row; a lapsed claim's row is due again at `dueAt` (its lease end). */
  token: string | null;
  done: boolean;
}

export type OutboxSettlement = { done: true; lastStatus: string } | { done: false; dueAt: number; lastStatus: string };

/**
 * Webhook subscriptions and their delivery outbox, in tables or keys of their own. Claims are leases: a row claimed by
 * a process that dies is due again when its lease ends, and only the holder of the current claim may settle it, so N
 * instances deliver each row once per lease (a retry keeps the row's `webhookId`). Every store passes the shared
 * outbox contract suite.
 */
export interface WebhookOutboxStore {
  init(): Promise<void>;
  /**
   * Inserts or replaces the record (a replace keeps status and watermark unless `status` is given). A new one is
   * refused with `'limit'` when its owner has `maxPerOwner` already.
   */
  saveSubscription(
    record: WebhookSubscriptionRecord,
    status: WebhookSubscriptionStatus | undefined,
    maxPerOwner: number,
  ): Promise<'created' | 'updated' | 'limit'>;
  getSubscription(id: string): Promise<StoredWebhookSubscription | undefined>;
  subscriptionsOf(owner: string): Promise<StoredWebhookSubscription[]>;
  /**
   * The subscriptions of an event type; with `scope`, only those that take events of that scope (their own scope is
   * it, or they have none), found through an index so publishing one task's event does not read every task's.
   */
  subscriptionsNamed(name: string, scope?: string): Promise<StoredWebhookSubscription[]>;
  setStatus(id: string, status: WebhookSubscriptionStatus): Promise<void>;
  /** Moves the watermark to `seq` unless it is there or beyond already. */
  advanceWatermark(id: string, seq: number, cursor: string | null): Promise<void>;
  /** Removes the subscription and its rows (but `terminated` ones); false when there was none. */
  deleteSubscription(id: string): Promise<boolean>;
  /**
   * Ends the subscription without dropping what it holds (EVENTS-SPEC TS8, TS9): adds its `terminated` row (`entry`,
   * with its `target`) and marks it ending with that row's `seq`, in one write. From then on it takes no `event` or
   * `gap` row; its queued rows are delivered or given up as usual; the `terminated` row is claimed only once every row
   * before it is done, and that claim removes the subscription with its remaining rows. Replies the row's `seq` (the
   * first one when it was ending already), `undefined` when there is no such subscription.
   */
  endSubscription(entry: OutboxEntry): Promise<number | undefined>;
  /**
   * Adds a row; `undefined` when the subscription has `maxQueued` event rows not yet done, or (an `event` or `gap`
   * row) when it is ending. Envelopes are not bounded:
   * a `gap` row replaces the cursor of the subscription's unclaimed gap row when there is one (one gap waits per
   * subscription), and a `terminated` row comes once, as the subscription ends.
   */
  enqueue(entry: OutboxEntry, maxQueued: number): Promise<number | undefined>;
  /**
   * Claims up to `limit` rows due at `now` (not done, unclaimed or with a lapsed lease), earliest due first (then by `seq`), for
   * `leaseMs`: each claimed row's `dueAt` becomes its lease end and its `attempts` one more (an attempt cut short by a
   * crash counts, so a row that kills its deliverer is not retried forever). A `terminated` row is due only once every
   * row before it in its subscription is done; claiming an ending subscription's one removes the subscription.
   */
  claim(token: string, now: number, leaseMs: number, limit: number): Promise<OutboxRow[]>;
  /** Settles a claimed row; false (nothing written) when `token` no longer holds it. */
  settle(seq: number, token: string, settlement: OutboxSettlement): Promise<boolean>;
  /** The subscription's rows, by `seq`. */
  rowsOf(subscriptionId: string): Promise<OutboxRow[]>;
  deleteRows(seqs: readonly number[]): Promise<void>;
  /** Ids of subscriptions whose grant ended before `now`. */
  expired(now: number, limit: number): Promise<string[]>;
}
