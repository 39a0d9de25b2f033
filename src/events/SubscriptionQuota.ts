import { ErrorCodes, RpcError } from '../rpc/index.js';
import type { EventCatalog } from './EventCatalog.js';
import { canonicalJson, webhookSubscriptionId } from './webhooks/webhookSubscriptionId.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/** Webhook subscriptions one principal may hold to one type, unless the type sets its own (docs/limits.md). */
export const DEFAULT_SUBSCRIPTIONS_PER_TYPE = 100;

/**
 * The per-type cap on one principal's webhook subscriptions (spec V115: `-32013` with `data.limit: "subscriptions"`
 * and `max`, checked before the subscription is created or its endpoint contacted). A refresh of a subscription the
 * principal holds is never refused. Subscribes of one principal to one type run one at a time in this process, so
 * concurrent ones cannot pass the cap together; instances sharing a store each check, and may together pass it by the
 * subscribes they run at the same moment (the store's per-principal cap still bounds the total).
 */
export class SubscriptionQuota {
  private readonly running = new Map<string, Promise<unknown>>();

  constructor(
    private readonly catalog: EventCatalog,
    private readonly webhooks: WebhookDeliveries,
    private readonly defaultMax: number,
  ) {}

  /** The cap of `name`. */
  maxFor(name: string): number {
    return this.catalog.optionsOf(name)?.maxSubscriptions ?? this.defaultMax;
  }

  /** Runs `subscribe` for the key unless it would create one subscription too many. */
  async within<T>(
    key: { owner: string | undefined; name: string; arguments: Record<string, unknown>; url: string },
    subscribe: () => Promise<T>,
  ): Promise<T> {
    const owner = key.owner;
    // No principal: the deliveries refuse it (spec V63); an unparsable URL: they answer -32602.
    if (owner === undefined || !URL.canParse(key.url)) return subscribe();
    const slot = `${owner}\u0000${key.name}`;
    const before = this.running.get(slot) ?? Promise.resolve();
    const run = before.then(
      () => this.check(owner, key),
      () => this.check(owner, key),
    );
    const done = run.then(subscribe);
    const settled = done.catch(() => {});
    this.running.set(slot, settled);
    void settled.then(() => {
      if (this.running.get(slot) === settled) this.running.delete(slot);
    });
    return done;
  }

  private async check(
    owner: string,
    key: { name: string; arguments: Record<string, unknown>; url: string },
  ): Promise<void> {
    const max = this.maxFor(key.name);
    const id = webhookSubscriptionId(owner, new URL(key.url).href, key.name, canonicalJson(key.arguments));
    const held = (await this.webhooks.list(owner)).filter((view) => view.name === key.name);
    if (held.some((view) => view.id === id) || held.length < max) return;
    throw new RpcError(
      ErrorCodes.EVENTS_RESOURCE_EXHAUSTED,
      `At most ${max} webhook subscriptions per principal to ${key.name}`,
      { limit: 'subscriptions', max, name: key.name },
    );
  }
}
