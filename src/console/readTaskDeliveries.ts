import type { WebhookOutboxStore } from '../engine/index.js';
import { subscriptionView, type SubscriptionView } from './subscriptionView.js';

/**
 * The webhook subscriptions taking a task's events (its owner's, scoped to it) and their deliveries still
 * in the outbox; undefined where the store keeps no webhooks. A task's subscriptions end with it (their last
 * delivery, `terminated`, stays until sent).
 */
export async function readTaskDeliveries(
  webhooks: WebhookOutboxStore | undefined,
  owner: string,
  taskId: string,
): Promise<SubscriptionView[] | undefined> {
  if (!webhooks) return undefined;
  const subscriptions = (await webhooks.subscriptionsOf(owner)).filter((sub) => sub.record.scope === taskId);
  return Promise.all(subscriptions.map(async (sub) => subscriptionView(sub, await webhooks.rowsOf(sub.record.id))));
}
