import { isTerminal, TASK_STATUS_EVENT, type EngineLogger, type TaskEngine, type TaskStatus } from '../engine/index.js';
import { webhookEventOf } from './taskEventOccurrence.js';
import { taskEndedError } from './TaskEventSubscription.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/**
 * Offers every entry appended in this process to the webhook subscriptions of its type and task (the owner's only),
 * and once a task's terminal status is in its log, ends those subscriptions with the task's ending (spec TS8, §16.4).
 * Returns the removal. A failure is logged: the entry is stored already, and poll and push still serve it.
 */
export function publishToWebhooks(
  engine: TaskEngine,
  webhooks: WebhookDeliveries,
  typeNames: readonly string[],
  logger: EngineLogger,
): () => void {
  return engine.onEventAppended((task, event) => {
    const status = event.type === TASK_STATUS_EVENT ? (event.data['status'] as TaskStatus) : undefined;
    void (async () => {
      await webhooks.publish(webhookEventOf(task, event));
      if (status === undefined || !isTerminal(status)) return;
      const ended = taskEndedError(task.taskId, { ...task, status });
      for (const name of typeNames) await webhooks.terminate({ name, scope: task.taskId }, ended);
    })().catch((error: unknown) =>
      logger.warn({ taskId: task.taskId, error: String(error) }, 'webhook publish of a task event failed'),
    );
  });
}
