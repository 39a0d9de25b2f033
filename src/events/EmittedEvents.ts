import { randomBytes } from 'node:crypto';

import { principalOwnerKey, TaskEventRejectedError, type EngineLogger } from '../engine/index.js';
import type { EventCatalog } from './EventCatalog.js';
import { EventRing } from './EventRing.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/** An untasked type's replay window when it sets none (docs/events.md, Limits). */
export const DEFAULT_RETAINED_EVENTS = 1_000;
export const DEFAULT_RETAINED_MS = 60 * 60_000;

/** An authenticated principal as the server's `authenticate` hook names it: its clientId, or clientId and `extra.sub`. */
export type Principal = string | { clientId?: string; sub?: string };

/** What the author's code may pass to `tasks.emitEvent`. */
export interface EmitEventOptions {
  /** Address the event to this principal only; default: every caller who may subscribe to the type. */
  to?: Principal;
}

/**
 * The owner an authenticated caller with this principal has (resolveCaller's `principalOwnerOf`: the same key, so an
 * addressed event reaches exactly that caller).
 */
export function principalOwner(principal: Principal): string {
  const { clientId, sub } = typeof principal === 'string' ? { clientId: principal, sub: undefined } : principal;
  if (!clientId && !sub) throw new TypeError('A principal needs a clientId or a sub');
  return principalOwnerKey({ clientId: clientId ?? null, subject: sub ?? null });
}

/**
 * The events of the untasked types (`taskScoped: false`), emitted by the author's code: each is checked against its
 * type, kept in the type's ring in this process (poll and push read them there) and published to the type's webhook
 * subscriptions through the store's durable outbox (every instance's subscriptions). A restart (the conformance
 * control, EVENTS-SPEC §14) replaces every ring: a new epoch, so earlier cursors read as stale (§12).
 */
export class EmittedEvents {
  private rings = new Map<string, EventRing>();
  /** Publishing per type in emit order (spec V41), one after the other. */
  private readonly chains = new Map<string, Promise<void>>();
  private generationNumber = 1;

  constructor(
    private readonly catalog: EventCatalog,
    private readonly webhooks: WebhookDeliveries | undefined,
    private readonly maxEventBytes: () => number,
    private readonly logger: () => EngineLogger | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.build();
  }

  /** The ring of an untasked type. */
  ring(name: string): EventRing {
    return this.rings.get(name) as EventRing;
  }

  /** Restarts so far, plus one. */
  get generation(): number {
    return this.generationNumber;
  }

  /**
   * Emits an event: a registered untasked type, data valid per its payloadSchema (spec V21) and at most
   * `limits.maxEventBytes`, else `TaskEventRejectedError`. Resolves with its `eventId` once it is queued for the
   * type's webhook subscriptions (a failure there is logged: poll and push still serve it).
   */
  async emit(name: string, data: Record<string, unknown>, options: EmitEventOptions = {}): Promise<string> {
    this.catalog.checkUntasked(name, data);
    const owner = options.to === undefined ? null : principalOwner(options.to);
    const bytes = Buffer.byteLength(JSON.stringify(data));
    if (bytes > this.maxEventBytes())
      throw new TaskEventRejectedError('too_large', `Event data of ${name} is ${bytes} bytes, over the limit`);
    const ring = this.ring(name);
    const entry = ring.append(owner, data);
    const webhooks = this.webhooks;
    if (webhooks && this.catalog.offers(name, 'webhook')) {
      const publish = () =>
        webhooks
          .publish({
            occurrence: entry.occurrence,
            owner: entry.owner,
            scope: null,
            cursor: ring.encode(entry.seq + 1),
          })
          .then(
            () => {},
            (error: unknown) =>
              this.logger()?.warn({ name, error: String(error) }, 'webhook publish of an event failed'),
          );
      const chain = (this.chains.get(name) ?? Promise.resolve()).then(publish);
      this.chains.set(name, chain);
      await chain;
      if (this.chains.get(name) === chain) this.chains.delete(name);
    }
    return entry.occurrence.eventId;
  }

  /** Replaces every ring (a new epoch): their streams end, their cursors read as stale. Returns the new generation. */
  restart(): number {
    const old = this.rings;
    this.rings = new Map();
    this.build();
    for (const ring of old.values()) ring.close();
    return ++this.generationNumber;
  }

  private build(): void {
    const epoch = randomBytes(6).toString('base64url');
    for (const name of this.catalog.untasked) {
      const retain = this.catalog.optionsOf(name)?.retain;
      this.rings.set(
        name,
        new EventRing(
          name,
          epoch,
          retain?.events ?? DEFAULT_RETAINED_EVENTS,
          retain?.maxAgeMs ?? DEFAULT_RETAINED_MS,
          this.now,
        ),
      );
    }
  }
}
