import { isTerminal, TASK_STATUS_EVENT, type EngineLogger, type TaskEngine, type TaskStatus } from '../engine/index.js';
import { webhookEventOf } from './taskEventOccurrence.js';
import { taskEndedError } from './TaskEventSubscription.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/**
 * How long a task's webhook subscriptions wait, once the task ended, for their queued deliveries before they end
 * anyway: ending one drops the rows it still holds (a receiver failing for longer loses them, and gets `terminated`).
 */
export const WEBHOOK_DRAIN_MS = 30_000;
const DRAIN_POLL_MS = 100;

/**
 * Offers every entry appended in this process to the webhook subscriptions of its type and task (the owner's only),
 * and once a task's terminal status is in its log and their queued deliveries are out (WEBHOOK_DRAIN_MS at most),
 * ends those subscriptions with the task's ending (spec TS8, TS9, §16.4).
 * Returns the removal. A failure is logged: the entry is stored already, and poll and push still serve it.
 */
export function publishToWebhooks(
  engine: TaskEngine,
  webhooks: WebhookDeliveries,
  typeNames: readonly string[],
  logger: EngineLogger,
): () => void {
  // One chain per task: its entries are published in `seq` order, and its subscriptions end only after its last
  // entry was queued (publishing concurrently, a terminate could delete them before the entry before it was queued).
  const chains = new Map<string, Promise<void>>();
  return engine.onEventAppended((task, event) => {
    const status = event.type === TASK_STATUS_EVENT ? (event.data['status'] as TaskStatus) : undefined;
    const publish = async () => {
      await webhooks.publish(webhookEventOf(task, event));
      if (status === undefined || !isTerminal(status)) return;
      const ended = taskEndedError(task.taskId, { ...task, status });
      await delivered(webhooks, task.owner, task.taskId);
      for (const name of typeNames) await webhooks.terminate({ name, scope: task.taskId }, ended);
    };
    const chain = (chains.get(task.taskId) ?? Promise.resolve())
      .then(publish)
      .catch((error: unknown) =>
        logger.warn({ taskId: task.taskId, error: String(error) }, 'webhook publish of a task event failed'),
      );
    chains.set(task.taskId, chain);
    void chain.then(() => {
      if (chains.get(task.taskId) === chain) chains.delete(task.taskId);
    });
  });
}

/** Resolves once no subscription to the task has deliveries queued, or after WEBHOOK_DRAIN_MS (spec TS9). */
async function delivered(webhooks: WebhookDeliveries, owner: string, taskId: string): Promise<void> {
  const deadline = Date.now() + WEBHOOK_DRAIN_MS;
  while (Date.now() < deadline) {
    const views = await webhooks.list(owner);
    if (!views.some((view) => view.scope === taskId && view.queued > 0)) return;
    await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS).unref());
  }
}
