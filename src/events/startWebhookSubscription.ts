import type { TaskEngine } from '../engine/index.js';
import { encodeTaskEventCursor } from './taskEventCursor.js';
import { taskEventOccurrence } from './taskEventOccurrence.js';
import { taskEndedError, type TaskEventSubscription } from './TaskEventSubscription.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/**
 * A new webhook subscription's start: the task's events from the subscribe cursor go to it alone, and when the task
 * has ended already, its `terminated` follows them (spec TS8, §16.4: retained events are served, then the ending).
 * The task's end is read after the subscription was saved, so an end that raced the subscribe is not missed: either
 * the end's publication saw the subscription and ended it, or this read sees the end (ending twice is a no-op).
 */
export async function startWebhookSubscription(
  engine: TaskEngine,
  webhooks: WebhookDeliveries,
  subscription: TaskEventSubscription,
  owner: string,
  id: string,
): Promise<void> {
  const { events } = await subscription.next(engine.limits.eventsPerTask + 1);
  if (events.length > 0)
    await webhooks.publishTo(
      owner,
      id,
      events.map((event) => ({
        occurrence: taskEventOccurrence(subscription.taskId, event),
        owner,
        scope: subscription.taskId,
        cursor: encodeTaskEventCursor(subscription.taskId, event.seq + 1),
      })),
    );
  const state = await subscription.state(engine.clock);
  // The outbox sends `terminated` after every delivery queued before it: the replay arrives first.
  if (!state || state.ended) await webhooks.terminate({ id }, taskEndedError(subscription.taskId, state?.task));
}
