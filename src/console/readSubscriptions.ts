import type { TaskBrowseStore, WebhookOutboxStore } from '../engine/index.js';
import { OWNERS_READ } from './readOwners.js';
import { subscriptionView, type SubscriptionView } from './subscriptionView.js';

/** Owners whose subscriptions the page reads at most. */
const MAX_OWNERS = 200;
/** Subscriptions the page lists at most. */
export const MAX_SUBSCRIPTIONS = 500;

export interface Subscriptions {
  /** False where the store keeps no webhooks. */
  supported: boolean;
  /** Newest first. */
  subscriptions: SubscriptionView[];
  /** Owners read, or subscriptions listed, stopped at a bound: there may be more. */
  capped: boolean;
}

/**
 * Every live webhook subscription, across owners. The outbox is read by owner, and a subscription takes one task's
 * events and ends with it, so the owners read are those of unfinished tasks (up to `OWNERS_READ` tasks per status).
 */
export async function readSubscriptions(
  browse: TaskBrowseStore,
  webhooks: WebhookOutboxStore | undefined,
  now: number,
): Promise<Subscriptions> {
  if (!webhooks) return { supported: false, subscriptions: [], capped: false };
  const page = (status: 'working' | 'input_required') => browse.page({ status }, { limit: OWNERS_READ, now });
  const [working, waiting] = await Promise.all([page('working'), page('input_required')]);
  const owners = [...new Set([...working, ...waiting].map((task) => task.owner))];
  let capped = working.length >= OWNERS_READ || waiting.length >= OWNERS_READ || owners.length > MAX_OWNERS;
  const subscriptions: SubscriptionView[] = [];
  for (const owner of owners.slice(0, MAX_OWNERS)) {
    for (const sub of await webhooks.subscriptionsOf(owner)) {
      if (sub.record.expiresAt !== null && sub.record.expiresAt < now) continue;
      if (subscriptions.length >= MAX_SUBSCRIPTIONS) {
        capped = true;
        break;
      }
      subscriptions.push(subscriptionView(sub, await webhooks.rowsOf(sub.record.id), 0));
    }
  }
  subscriptions.sort((a, b) => b.createdAt - a.createdAt);
  return { supported: true, subscriptions, capped };
}
