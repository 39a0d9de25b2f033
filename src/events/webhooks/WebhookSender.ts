import { randomUUID } from 'node:crypto';

import type { OutboxRow, StoredWebhookSubscription, WebhookOutboxStore } from '../../engine/index.js';
import type { CallbackPolicy } from './CallbackPolicy.js';
import type { WebhookDeliveryOutcome } from './WebhookDeliveries.js';
import type { WebhookFailure } from './WebhookFailure.js';
import type { WebhookLimits } from './WebhookLimits.js';
import { afterAttempt } from './deliveryHealth.js';
import { postWebhook } from './postWebhook.js';
import { webhookHeaders } from './signWebhook.js';
import { webhookKeyOf } from './webhookSecret.js';

/** What one delivery attempt came to, for metrics and the console. */
export interface WebhookAttempt {
  subscriptionId: string;
  webhookId: string;
  kind: OutboxRow['kind'];
  attempt: number;
  outcome: WebhookDeliveryOutcome;
  failure?: WebhookFailure;
  /** How long this attempt took, from its claim to its settlement. */
  ms: number;
}

export interface WebhookSenderOptions {
  store: WebhookOutboxStore;
  policy: CallbackPolicy;
  limits: WebhookLimits;
  now: () => number;
  onAttempt?: (attempt: WebhookAttempt) => void;
  onError?: (error: unknown) => void;
}

/** How often expired subscriptions are looked for. */
const EXPIRY_SWEEP_MS = 5_000;

/**
 * The delivery loop of one process: claims due outbox rows under a lease, signs each attempt anew (spec V85) and
 * POSTs it on the SSRF-guarded path, and settles the row as the claim's holder. A process that dies mid-delivery holds
 * its rows only until the lease ends; another process then delivers them with the same `webhook-id`, so the outbox
 * loses nothing and a receiver dedups on the id. Within one lease a row is delivered by one process only.
 */
export class WebhookSender {
  private readonly token = `ws-${randomUUID()}`;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** The claim round in progress: stop() waits for it, then for the deliveries it started. */
  private pumping: Promise<void> | undefined;
  private again = false;
  private lastSweep = 0;
  /** Health updates of one subscription, one after another in this process (read, change, write). */
  private readonly health = new Map<string, Promise<void>>();

  constructor(private readonly options: WebhookSenderOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.pumping;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Looks for due rows now (a row was queued in this process). */
  wake(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pumping = this.pump().finally(() => (this.pumping = undefined));
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        const { store, limits, now } = this.options;
        const room = limits.concurrency - this.inFlight.size;
        if (room <= 0) break;
        const rows = await store.claim(this.token, now(), limits.leaseMs, room);
        for (const row of rows) this.track(this.deliver(row));
        if (rows.length === room) this.again = true;
        if (now() - this.lastSweep >= EXPIRY_SWEEP_MS) {
          this.lastSweep = now();
          for (const id of await store.expired(now(), 100)) await store.deleteSubscription(id);
        }
      } while (this.again && this.running);
    } catch (error) {
      this.options.onError?.(error);
    } finally {
      if (this.running) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.wake(), this.options.limits.pollMs);
        this.timer.unref();
      }
    }
  }

  private track(delivery: Promise<void>): void {
    const tracked = delivery
      .catch((error: unknown) => this.options.onError?.(error))
      .finally(() => {
        this.inFlight.delete(tracked);
        // A slot came free: more may be due.
        if (this.running) this.wake();
      });
    this.inFlight.add(tracked);
  }

  private async deliver(row: OutboxRow): Promise<void> {
    const { store, now } = this.options;
    const started = now();
    const sub = row.kind === 'terminated' ? undefined : await store.getSubscription(row.subscriptionId);
    let target: { url: string; secrets: string[] } | undefined = row.target;
    if (row.kind !== 'terminated') {
      // Gone, expired or suspended: the row is dropped (a refresh of a suspended one says `truncated`).
      const live = sub && (sub.record.expiresAt === null || sub.record.expiresAt >= started) && sub.status.active;
      if (!live) return this.finish(row, sub, { done: true, lastStatus: 'dropped' }, 'abandoned', undefined, started);
      target = {
        url: sub.record.url,
        secrets: sub.record.secrets.filter((s) => s.until === undefined || s.until > started).map((s) => s.secret),
      };
    }
    if (!target) return this.finish(row, sub, { done: true, lastStatus: 'dropped' }, 'abandoned', undefined, started);

    const body = await this.bodyOf(row, sub);
    const url = new URL(target.url);
    const keys = target.secrets.map(webhookKeyOf);
    const headers = webhookHeaders(keys, row.webhookId, body, row.subscriptionId, started);
    const open = this.options.policy.isAllowedOrigin(url);
    const outcome = await postWebhook(url, headers, body, open, this.options.limits.timeoutMs);
    if (outcome.ok) {
      return this.finish(row, sub, { done: true, lastStatus: String(outcome.status) }, 'delivered', undefined, started);
    }
    const failure = outcome.failure ?? 'connection_refused';
    const lastStatus = outcome.status === undefined ? failure : String(outcome.status);
    // spec V89: 410 and 413 end this delivery only; the subscription stays.
    const final = outcome.status === 410 || outcome.status === 413 || row.attempts >= this.options.limits.maxAttempts;
    if (final) return this.finish(row, sub, { done: true, lastStatus }, 'abandoned', failure, started);
    const delays = this.options.limits.retryDelaysMs;
    const delay = delays[Math.min(row.attempts, delays.length) - 1] ?? 1_000;
    const jittered = Math.round(delay * (0.9 + Math.random() * 0.2));
    return this.finish(row, sub, { done: false, dueAt: now() + jittered, lastStatus }, 'failed', failure, started);
  }

  /**
   * The body as sent: an event carries its cursor only when nothing before it in this subscription is unsettled, else
   * the watermark's (spec V86), so a receiver persisting the cursor of out-of-order arrivals never skips an event.
   */
  private async bodyOf(row: OutboxRow, sub: StoredWebhookSubscription | undefined): Promise<string> {
    const body = JSON.parse(row.body) as Record<string, unknown>;
    if (row.kind === 'gap') return JSON.stringify({ ...body, cursor: row.cursor });
    if (row.kind !== 'event') return row.body;
    const rows = await this.options.store.rowsOf(row.subscriptionId);
    const blocked = rows.some((other) => other.seq < row.seq && other.kind === 'event' && !other.done);
    const cursor = blocked ? (sub?.watermark?.cursor ?? null) : row.cursor;
    return JSON.stringify({ ...body, cursor });
  }

  private async finish(
    row: OutboxRow,
    sub: StoredWebhookSubscription | undefined,
    settlement: Parameters<WebhookOutboxStore['settle']>[2],
    outcome: WebhookDeliveryOutcome,
    failure: WebhookFailure | undefined,
    started: number,
  ): Promise<void> {
    const { store, now } = this.options;
    if (!(await store.settle(row.seq, this.token, settlement))) return; // the lease lapsed: another holds the row
    let reported = outcome;
    if (sub && settlement.lastStatus !== 'dropped')
      if (await this.recordHealth(sub.record.id, failure)) reported = 'suspended';
    this.options.onAttempt?.({
      subscriptionId: row.subscriptionId,
      webhookId: row.webhookId,
      kind: row.kind,
      attempt: row.attempts,
      outcome: reported,
      ...(failure && { failure }),
      ms: now() - started,
    });
    if (settlement.done) await this.compact(row.subscriptionId);
  }

  /**
   * Updates the subscription's health from its current stored status; true when this attempt suspended it. Instances
   * may interleave their updates (the counts are advisory); within this process they run in turn.
   */
  private recordHealth(id: string, failure: WebhookFailure | undefined): Promise<boolean> {
    const { store, now, limits } = this.options;
    let suspended = false;
    const previous = this.health.get(id) ?? Promise.resolve();
    const next = previous.then(async () => {
      const current = await store.getSubscription(id);
      if (!current) return;
      const status = afterAttempt(current.status, failure, now(), limits);
      suspended = current.status.active && !status.active;
      await store.setStatus(id, status);
    });
    const settled = next.catch(() => undefined);
    this.health.set(id, settled);
    void settled.then(() => {
      if (this.health.get(id) === settled) this.health.delete(id);
    });
    return next.then(() => suspended);
  }

  /** Moves the watermark past the settled prefix of the subscription's rows and removes those rows. */
  private async compact(subscriptionId: string): Promise<void> {
    const { store } = this.options;
    const rows = await store.rowsOf(subscriptionId);
    const settled: number[] = [];
    let mark: OutboxRow | undefined;
    for (const row of rows) {
      if (!row.done) break;
      settled.push(row.seq);
      if (row.kind === 'event') mark = row;
    }
    if (mark) await store.advanceWatermark(subscriptionId, mark.seq, mark.cursor);
    await store.deleteRows(settled);
  }
}
