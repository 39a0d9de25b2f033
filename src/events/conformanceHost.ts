import { ErrorCodes, RpcError } from '../rpc/index.js';
import type { ConformanceHost } from './ConformanceControls.js';
import type { EventCatalog } from './EventCatalog.js';
import { principalOwner, type EmittedEvents } from './EmittedEvents.js';
import type { EmittedEventsFront } from './EmittedEventsFront.js';
import type { StreamControls } from './StreamControls.js';
import type { SubscriptionQuota } from './SubscriptionQuota.js';
import { generateWebhookSecret } from './webhooks/webhookSecret.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/** Subscription ids the state control can look up (the newest kept): a bound on a fixture's memory. */
const MAX_KNOWN_IDS = 10_000;

/**
 * What the §14 subscription, quota and restart controls do in this runtime (a conformance fixture's only):
 * `restart` replaces the in-process event state, as a new process would find it over the same store. The untasked
 * types' rings start again under a new epoch (earlier cursors read as stale: `truncated`, EVENTS-SPEC §12), every
 * live push stream ends (`terminated`, V49), poll keeps no state to lose, and webhook subscriptions and their
 * outbox, being in the store, live on (V116, V117).
 */
export function conformanceHost(parts: {
  catalog: EventCatalog;
  emitted: EmittedEvents;
  emittedFront: EmittedEventsFront;
  streams: StreamControls;
  webhooks: WebhookDeliveries | undefined;
  quota: SubscriptionQuota | undefined;
}): ConformanceHost & { subscribed(owner: string, id: string): void } {
  const owners = new Map<string, string>();
  const webhooks = () => {
    if (!parts.webhooks) throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Webhook delivery is not configured');
    return parts.webhooks;
  };
  return {
    subscribed(owner, id) {
      owners.delete(id);
      owners.set(id, owner);
      if (owners.size > MAX_KNOWN_IDS) owners.delete(owners.keys().next().value as string);
    },
    async subscribeAs(principal, name, url) {
      if (!parts.catalog.isUntasked(name))
        throw new RpcError(ErrorCodes.INVALID_PARAMS, `Invalid params: ${name} is not an untasked event type`);
      const result = await parts.emittedFront.subscribeAs(principalOwner(principal), {
        name,
        cursor: null,
        delivery: { url, secret: generateWebhookSecret() },
      });
      return String(result['id']);
    },
    async subscriptionExists(principal, name, url) {
      const href = URL.canParse(url) ? new URL(url).href : url;
      return (await webhooks().list(principalOwner(principal))).some((view) => view.name === name && view.url === href);
    },
    subscriptionState(id) {
      return webhooks().state(owners.get(id), id);
    },
    quota() {
      const quota = parts.quota;
      const offering = parts.catalog.names.filter((type) => parts.catalog.offers(type, 'webhook'));
      // An untasked type if there is one (a suite subscribes it with no arguments), the one with the tightest cap.
      const untasked = offering.filter((type) => parts.catalog.isUntasked(type));
      const candidates = untasked.length > 0 ? untasked : offering;
      if (!quota || candidates.length === 0) return undefined;
      const name = candidates.reduce((best, type) => (quota.maxFor(type) < quota.maxFor(best) ? type : best));
      return { name, max: quota.maxFor(name) };
    },
    restart() {
      for (const name of parts.catalog.names)
        if (!parts.catalog.isUntasked(name)) parts.streams.send(name, 'terminate');
      return parts.emitted.restart();
    },
    generation() {
      return parts.emitted.generation;
    },
  };
}
