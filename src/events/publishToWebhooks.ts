import { isTerminal, TASK_STATUS_EVENT, type EngineLogger, type TaskEngine, type TaskStatus } from '../engine/index.js';
import { webhookEventOf } from './taskEventOccurrence.js';
import { taskEndedError } from './TaskEventSubscription.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/**
 * Offers every entry appended in this process to the webhook subscriptions of its type and task (the owner's only),
 * and once a task's terminal status is queued, ends those subscriptions with the task's ending (spec TS8, TS9, §16.4).
 * Ending is the outbox's: it sends `terminated` after every delivery queued before it, and drops none of them.
 * Returns the removal. A failure is logged: the entry is stored already, and poll and push still serve it.
 */
export function publishToWebhooks(
  engine: TaskEngine,
  webhooks: WebhookDeliveries,
  typeNames: readonly string[],
  logger: EngineLogger,
): () => void {
  // One chain per task: its entries are published in `seq` order, and its subscriptions end only after its last
  // entry was queued (an ending subscription takes no new row).
  const chains = new Map<string, Promise<void>>();
  return engine.onEventAppended((task, event) => {
    const status = event.type === TASK_STATUS_EVENT ? (event.data['status'] as TaskStatus) : undefined;
    const publish = async () => {
      await webhooks.publish(webhookEventOf(task, event));
      if (status === undefined || !isTerminal(status)) return;
      const ended = taskEndedError(task.taskId, { ...task, status });
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
