import { randomBytes } from 'node:crypto';

import type { OutboxEntry, StoredWebhookSubscription, WebhookOutboxStore } from '../../engine/index.js';
import { CallbackPolicy } from './CallbackPolicy.js';
import { deliveryStatusOf, reactivated } from './deliveryHealth.js';
import { grantTtl } from './grantTtl.js';
import { resolvesPublicly } from './postWebhook.js';
import { ReceiverDocuments } from './ReceiverDocuments.js';
import { VerificationBudget } from './VerificationBudget.js';
import { verifyEndpoint } from './verifyEndpoint.js';
import type {
  TerminationError,
  WebhookDeliveries,
  WebhookEvent,
  WebhookKey,
  WebhookSubscribeInput,
  WebhookSubscribeResult,
  WebhookSubscriptionView,
} from './WebhookDeliveries.js';
import { WebhookError } from './WebhookError.js';
import { DEFAULT_WEBHOOK_LIMITS, type WebhookLimits } from './WebhookLimits.js';
import { type WebhookAttempt, WebhookSender } from './WebhookSender.js';
import { canonicalJson, webhookSubscriptionId } from './webhookSubscriptionId.js';
import { webhookKeyOf } from './webhookSecret.js';

export interface OutboxWebhookDeliveriesOptions {
  /** The store's outbox (`TaskStore.webhooks`): shared by every instance on the same store. */
  store: WebhookOutboxStore;
  /** Which callback URLs may be subscribed (https and public addresses unless allowlisted). */
  policy?: CallbackPolicy;
  limits?: Partial<WebhookLimits>;
  /** Told of each attempt (metrics, the console). */
  onAttempt?: (attempt: WebhookAttempt) => void;
  /** Told of a store error in the delivery loop (the loop goes on). */
  onError?: (error: unknown) => void;
  /** The clock, epoch ms. */
  now?: () => number;
}

const envelopeId = (type: string) => `msg_${type}_${randomBytes(12).toString('hex')}`;

/**
 * How long after its creation a subscription's queued rows are checked before an event is queued to it. A new
 * subscription's replay and the live publishing of the events appended meanwhile may both offer one event; the
 * check keeps it to one delivery. Later, only live publishing offers events and the check is skipped.
 */
const REPLAY_OVERLAP_MS = 10_000;

/**
 * Webhook delivery from the store's durable outbox (EVENTS-SPEC §7, §13). `publish` writes a row per subscription
 * before it resolves; the sender of any instance delivers it (see WebhookSender). Owner-scoped: another principal's
 * subscription reads, refreshes and unsubscribes exactly like a missing one.
 */
export class OutboxWebhookDeliveries implements WebhookDeliveries {
  readonly limits: WebhookLimits;
  readonly policy: CallbackPolicy;
  private readonly store: WebhookOutboxStore;
  private readonly sender: WebhookSender;
  private readonly now: () => number;
  private readonly verifications: VerificationBudget;
  private readonly documents: ReceiverDocuments;

  constructor(options: OutboxWebhookDeliveriesOptions) {
    this.store = options.store;
    this.policy = options.policy ?? new CallbackPolicy();
    this.limits = { ...DEFAULT_WEBHOOK_LIMITS, ...options.limits };
    this.now = options.now ?? Date.now;
    this.verifications = new VerificationBudget(this.limits.verificationsPerHostPerMinute);
    this.documents = new ReceiverDocuments(this.now, this.limits.timeoutMs);
    this.sender = new WebhookSender({
      store: this.store,
      policy: this.policy,
      limits: this.limits,
      now: this.now,
      ...(options.onAttempt && { onAttempt: options.onAttempt }),
      ...(options.onError && { onError: options.onError }),
    });
  }

  async subscribe(input: WebhookSubscribeInput): Promise<WebhookSubscribeResult> {
    const owner = ownerOf(input);
    const url = this.policy.parse(input.url);
    const key = webhookKeyOf(input.secret);
    const open = this.policy.isAllowedOrigin(url);
    // spec V98: refused at subscribe when the host resolves to a non-public address (and again at every delivery).
    if (!open && !(await resolvesPublicly(url)))
      throw new WebhookError('invalid_params', 'delivery.url does not resolve to a public address', {
        reason: 'callback_url_not_allowed',
      });
    const args = canonicalJson(input.arguments);
    const id = webhookSubscriptionId(owner, url.href, input.name, args);
    const now = this.now();
    const existing = await this.live(id, now);
    const owned = await this.store.subscriptionsOf(owner);
    // spec V103: verification is per (principal, url), shared across its subscriptions, never across principals.
    const verified =
      this.policy.isTrusted(url.href) || owned.some((s) => s.record.url === url.href && s.record.verified);
    if (!verified) {
      if (!existing && owned.length >= this.limits.subscriptionsPerOwner) throw this.tooMany();
      if (!this.verifications.take(url.hostname, now)) {
        const max = this.limits.verificationsPerHostPerMinute;
        throw new WebhookError('resource_exhausted', `At most ${max} endpoint verifications per host a minute`, {
          limit: 'webhookVerifications',
          max,
        });
      }
      // spec V100 (d): a receiver that lists this path in its well-known document has consented; else the handshake.
      const consented = await this.documents.consents(url, open);
      const failure = consented ? undefined : await verifyEndpoint(url, key, id, open, this.limits.timeoutMs); // V101
      if (failure)
        throw new WebhookError('callback_endpoint_error', `The endpoint failed verification: ${failure}`, {
          reason: failure,
        });
    }
    const expiresAt = grantTtl(input.ttlMs, now, this.limits);
    // spec V71, V72: the new secret signs from now on; the one it replaces also signs for a short grace.
    const secrets: Array<{ secret: string; until?: number }> = [{ secret: input.secret }];
    const previous = existing?.record.secrets.find((s) => s.until === undefined);
    if (previous && previous.secret !== input.secret)
      secrets.push({ secret: previous.secret, until: now + this.limits.secretGraceMs });
    else {
      const grace = existing?.record.secrets.find(
        (s) => s.until !== undefined && s.until > now && s.secret !== input.secret,
      );
      if (grace) secrets.push(grace);
    }
    const record = {
      id,
      owner,
      name: input.name,
      url: url.href,
      arguments: args,
      scope: input.scope ?? null,
      secrets,
      expiresAt,
      createdAt: existing?.record.createdAt ?? now,
      verified: true,
    };
    const wasSuspended = existing !== undefined && !existing.status.active;
    const status = existing ? reactivated(existing.status, now) : undefined;
    const saved = await this.store.saveSubscription(record, status, this.limits.subscriptionsPerOwner);
    if (saved === 'limit') throw this.tooMany();
    const after = (await this.store.getSubscription(id)) as StoredWebhookSubscription;
    // spec V73: a safe cursor: the watermark while deliveries are in flight, else where this subscribe starts.
    const inFlight = existing ? (await this.store.rowsOf(id)).some((r) => r.kind === 'event' && !r.done) : false;
    const cursor = inFlight ? (after.watermark?.cursor ?? input.cursor) : input.cursor;
    return {
      id,
      refreshBefore: expiresAt === null ? null : new Date(expiresAt).toISOString(),
      cursor,
      // Events of a suspended subscription were dropped: the refresh says so (spec V33).
      truncated: (input.truncated ?? false) || wasSuspended,
      deliveryStatus: deliveryStatusOf(after.status),
      created: saved === 'created' || existing === undefined,
    };
  }

  async unsubscribe(key: WebhookKey): Promise<void> {
    const owner = ownerOf(key);
    const url = this.policy.parse(key.url);
    const id = webhookSubscriptionId(owner, url.href, key.name, canonicalJson(key.arguments));
    const sub = await this.store.getSubscription(id);
    // spec V108, V109: by key, the principal from auth; another principal's is as missing.
    if (!sub || sub.record.owner !== owner || !(await this.store.deleteSubscription(id)))
      throw new WebhookError('not_found', 'No such subscription', { kind: 'subscription' });
  }

  async publish(event: WebhookEvent): Promise<number> {
    const now = this.now();
    const subs = await this.store.subscriptionsNamed(event.occurrence.name, event.scope ?? undefined);
    let queued = 0;
    for (const sub of subs) {
      if (!this.receives(sub, event, now)) continue;
      const fresh = now - sub.record.createdAt < REPLAY_OVERLAP_MS;
      if (fresh && (await this.queuedIds(sub.record.id)).has(event.occurrence.eventId)) continue;
      if (await this.queue(sub.record.id, event, now)) queued++;
    }
    if (queued > 0) this.sender.wake();
    return queued;
  }

  async publishTo(owner: string, id: string, events: readonly WebhookEvent[]): Promise<number> {
    const now = this.now();
    const sub = await this.live(id, now);
    if (!sub || sub.record.owner !== owner) return 0;
    // Events the live publishing queued to it meanwhile are not queued twice.
    const already = await this.queuedIds(id);
    let queued = 0;
    for (const event of events)
      if (
        event.occurrence.name === sub.record.name &&
        !already.has(event.occurrence.eventId) &&
        this.receives(sub, event, now) &&
        (await this.queue(id, event, now))
      )
        queued++;
    if (queued > 0) this.sender.wake();
    return queued;
  }

  async gap(id: string, cursor: string | null): Promise<boolean> {
    if (!(await this.live(id, this.now()))) return false;
    await this.queueGap(id, cursor, this.now());
    this.sender.wake();
    return true;
  }

  async terminate(which: { id: string } | { name: string; scope?: string }, error: TerminationError): Promise<number> {
    const now = this.now();
    const subs =
      'id' in which
        ? [await this.store.getSubscription(which.id)].filter((s): s is StoredWebhookSubscription => s !== undefined)
        : (await this.store.subscriptionsNamed(which.name, which.scope)).filter(
            (s) => which.scope === undefined || s.record.scope === which.scope,
          );
    let ended = 0;
    for (const sub of subs) {
      if (sub.ending !== null) continue;
      // spec V110, TS8, TS9: a signed `terminated` envelope, sent by the outbox after every delivery queued before it
      // (delivered or given up); the subscription takes nothing new and is removed as the envelope goes out.
      const secrets = sub.record.secrets.filter((s) => s.until === undefined || s.until > now).map((s) => s.secret);
      const seq = await this.store.endSubscription({
        subscriptionId: sub.record.id,
        webhookId: envelopeId('terminated'),
        kind: 'terminated',
        body: JSON.stringify({ type: 'terminated', error }),
        cursor: null,
        dueAt: now,
        target: { url: sub.record.url, secrets },
      });
      if (seq !== undefined) ended++;
    }
    if (subs.length > 0) this.sender.wake();
    return ended;
  }

  async state(owner: string | undefined, id: string): Promise<'active' | 'suspended' | 'absent'> {
    if (owner === undefined) return 'absent';
    const sub = await this.live(id, this.now());
    if (!sub || sub.record.owner !== owner) return 'absent';
    return sub.status.active ? 'active' : 'suspended';
  }

  async list(owner: string): Promise<WebhookSubscriptionView[]> {
    const now = this.now();
    const views: WebhookSubscriptionView[] = [];
    for (const sub of await this.store.subscriptionsOf(owner)) {
      if (sub.record.expiresAt !== null && sub.record.expiresAt < now) continue;
      const rows = await this.store.rowsOf(sub.record.id);
      views.push({
        id: sub.record.id,
        name: sub.record.name,
        arguments: JSON.parse(sub.record.arguments) as Record<string, unknown>,
        url: sub.record.url,
        scope: sub.record.scope,
        refreshBefore: sub.record.expiresAt === null ? null : new Date(sub.record.expiresAt).toISOString(),
        deliveryStatus: deliveryStatusOf(sub.status),
        queued: rows.filter((r) => !r.done).length,
      });
    }
    return views;
  }

  start(): void {
    this.sender.start();
  }

  stop(): Promise<void> {
    return this.sender.stop();
  }

  /** The subscription unless it is missing, its grant ended, or it was ended (it only drains then). */
  private async live(id: string, now: number): Promise<StoredWebhookSubscription | undefined> {
    const sub = await this.store.getSubscription(id);
    if (!sub || sub.ending !== null || (sub.record.expiresAt !== null && sub.record.expiresAt < now)) return undefined;
    return sub;
  }

  /** The webhook ids of the subscription's event rows (queued, or delivered and not yet compacted). */
  private async queuedIds(id: string): Promise<Set<string>> {
    const rows = await this.store.rowsOf(id);
    return new Set(rows.filter((row) => row.kind === 'event').map((row) => row.webhookId));
  }

  /** Whether `sub` may see `event`: the owner's or everyone's, in its scope, live and not suspended. */
  private receives(sub: StoredWebhookSubscription, event: WebhookEvent, now: number): boolean {
    if (event.owner !== null && event.owner !== sub.record.owner) return false;
    if (sub.record.scope !== null && sub.record.scope !== (event.scope ?? null)) return false;
    if (sub.record.expiresAt !== null && sub.record.expiresAt < now) return false;
    return sub.status.active && sub.ending === null;
  }

  /** Queues the event, or a gap in its place when the queue is full or the body too large. */
  private async queue(id: string, event: WebhookEvent, now: number): Promise<boolean> {
    const body = JSON.stringify(event.occurrence);
    // The cursor is added per attempt: leave room for it in the size check.
    const fits = Buffer.byteLength(body) + 16 + (event.cursor?.length ?? 4) <= this.limits.maxBodyBytes; // spec V90
    const entry: OutboxEntry = {
      subscriptionId: id,
      webhookId: event.occurrence.eventId, // spec V22: stable across retries and instances
      kind: 'event',
      body,
      cursor: event.cursor,
      dueAt: now,
    };
    if (fits && (await this.store.enqueue(entry, this.limits.queuedPerSubscription)) !== undefined) return true;
    await this.queueGap(id, event.cursor, now);
    return true;
  }

  private async queueGap(id: string, cursor: string | null, now: number): Promise<void> {
    await this.store.enqueue(
      { subscriptionId: id, webhookId: envelopeId('gap'), kind: 'gap', body: '{"type":"gap"}', cursor, dueAt: now },
      this.limits.queuedPerSubscription,
    );
  }

  private tooMany(): WebhookError {
    const max = this.limits.subscriptionsPerOwner;
    return new WebhookError('resource_exhausted', `At most ${max} webhook subscriptions per principal`, {
      limit: 'webhookSubscriptions',
      max,
    });
  }
}

/** spec V63: webhook subscriptions need an authenticated principal. */
function ownerOf(key: { owner: string | undefined }): string {
  if (key.owner === undefined || key.owner === '')
    throw new WebhookError('forbidden', 'Webhook delivery needs an authenticated principal', {
      reason: 'unauthenticated',
    });
  return key.owner;
}
