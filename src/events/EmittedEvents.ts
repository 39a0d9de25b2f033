import { randomBytes } from 'node:crypto';

import {
  principalOwnerKey,
  TaskEventRejectedError,
  type EngineLogger,
  type EventStreamLog,
  type TaskEventBus,
  type TaskStore,
} from '../engine/index.js';
import type { EventCatalog } from './EventCatalog.js';
import { EventRing, type RingEntry } from './EventRing.js';
import { StoredEventStream } from './StoredEventStream.js';
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
 * type, kept in the type's ring (poll and push read them there) and published to the type's webhook subscriptions
 * through the store's durable outbox (every instance's subscriptions). A type's ring is this process's own, or, with
 * `retain.durable`, a mirror of the type's log in the task store (StoredEventStream), which every instance and queue
 * worker shares. A restart (the conformance control, EVENTS-SPEC §14) replaces every process ring: a new epoch, so
 * earlier cursors read as stale (§12); a durable type's cursors stay valid.
 */
export class EmittedEvents {
  private rings = new Map<string, EventRing>();
  /** The durable types' streams, opened on first use. */
  private stored = new Map<string, Promise<StoredEventStream>>();
  private storage: { log: EventStreamLog; bus: TaskEventBus } | undefined;
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

  /**
   * Keeps the durable types' events in `store` (its event streams, woken on its bus); throws when some type asks for
   * it and the store keeps none.
   */
  useStore(store: TaskStore): void {
    const durable = this.catalog.untasked.filter((name) => this.catalog.durable(name));
    if (durable.length === 0) return;
    const log = store.eventStreams;
    if (!log)
      throw new TypeError(
        `Event type ${durable[0]} has retain.durable, and the ${store.kind} store keeps no event streams`,
      );
    this.storage = { log, bus: store.events };
  }

  /** The ring of an untasked type: caught up with the store's log for a durable type, so it holds every event so far. */
  async source(name: string): Promise<EventRing> {
    const stream = this.streamOf(name);
    if (!stream) return this.rings.get(name) as EventRing;
    const opened = await stream;
    await opened.catchUp();
    return opened.ring;
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
    const stream = this.streamOf(name);
    let ring: EventRing;
    let entry: RingEntry;
    if (stream) {
      const opened = await stream;
      ring = opened.ring;
      entry = await opened.append(owner, data);
    } else {
      ring = this.rings.get(name) as EventRing;
      entry = ring.append(owner, data);
    }
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
    this.closeStored();
    return ++this.generationNumber;
  }

  /** Stops following the store's logs (the server closing). */
  close(): void {
    this.closeStored();
  }

  /** The durable type's stream (opened now if it is not yet), or undefined for a type kept per process. */
  private streamOf(name: string): Promise<StoredEventStream> | undefined {
    if (!this.catalog.durable(name)) return undefined;
    let stream = this.stored.get(name);
    if (stream) return stream;
    const storage = this.storage;
    if (!storage) return Promise.reject(new Error(`Event type ${name} has retain.durable: the store is not open yet`));
    const retain = this.catalog.optionsOf(name)?.retain;
    // init() is idempotent: a failed one (the store down) is tried again with the next open.
    stream = storage.log.init().then(() =>
      StoredEventStream.open({
        name,
        log: storage.log,
        bus: storage.bus,
        keep: retain?.events ?? DEFAULT_RETAINED_EVENTS,
        maxAgeMs: retain?.maxAgeMs ?? DEFAULT_RETAINED_MS,
        now: this.now,
        logger: this.logger,
      }),
    );
    this.stored.set(name, stream);
    // A failed open (the store down) is tried again by the next caller.
    stream.catch(() => {
      if (this.stored.get(name) === stream) this.stored.delete(name);
    });
    return stream;
  }

  private closeStored(): void {
    const old = this.stored;
    this.stored = new Map();
    for (const stream of old.values())
      stream.then(
        (opened) => opened.close(),
        () => {},
      );
  }

  private build(): void {
    const epoch = randomBytes(6).toString('base64url');
    for (const name of this.catalog.untasked) {
      if (this.catalog.durable(name)) continue;
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
