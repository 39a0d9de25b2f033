import {
  isTerminal,
  principalOfOwner,
  TASK_STATUS_EVENT,
  type EngineLogger,
  type TaskEngine,
  type TaskStatus,
  type WebhookOutboxStore,
} from '../engine/index.js';
import { webhookEventOf } from './taskEventOccurrence.js';
import { taskEndedError } from './TaskEventSubscription.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';
import { ACCESS_REVOKED, type EventAccess } from './EventAccess.js';

/**
 * Offers every entry appended in this process to the webhook subscriptions of its type and task (the owner's only),
 * and once a task's terminal status is queued, ends those subscriptions with the task's ending (spec TS8, TS9, §16.4);
 * a task this process removes ends them too.
 * Ending is the outbox's: it sends `terminated` after every delivery queued before it, and drops none of them.
 * A failure is logged: the entry is stored already, and poll and push still serve it.
 */
export function publishToWebhooks(
  engine: TaskEngine,
  webhooks: WebhookDeliveries,
  /** The server's type names, or where the process does not know them, how to find those a task's subscriptions have. */
  typeNames: readonly string[] | SubscribedTypes,
  logger: EngineLogger,
  /** The operator's event authorization, re-verified for the task's owner while its subscriptions live (spec V65). */
  access?: EventAccess,
): WebhookPublishing {
  // One chain per task: its entries are published in `seq` order, and its subscriptions end only after its last
  // entry was queued (an ending subscription takes no new row).
  const chains = new Map<string, Promise<void>>();
  const serialized = <T>(taskId: string, work: () => Promise<T>): Promise<T> => {
    const run = (chains.get(taskId) ?? Promise.resolve()).then(work);
    const chain = run.then(
      () => {},
      () => {},
    );
    chains.set(taskId, chain);
    void chain.then(() => {
      if (chains.get(taskId) === chain) chains.delete(taskId);
    });
    return run;
  };
  const enqueue = (taskId: string, work: () => Promise<void>) =>
    void serialized(taskId, work).catch((error: unknown) =>
      logger.warn({ taskId, error: String(error) }, 'webhook publish of a task event failed'),
    );
  const endAll = async (taskId: string, ended: ReturnType<typeof taskEndedError>, owner?: string) => {
    const names =
      typeof typeNames !== 'function' ? typeNames : owner === undefined ? [] : await typeNames(taskId, owner);
    for (const name of names) await webhooks.terminate({ name, scope: taskId }, ended);
  };
  const appended = engine.onEventAppended((task, event) => {
    const status = event.type === TASK_STATUS_EVENT ? (event.data['status'] as TaskStatus) : undefined;
    enqueue(task.taskId, async () => {
      const queued = await webhooks.publish(webhookEventOf(task, event));
      // spec V65 V110: asked only of a task someone subscribes to (its owner is then a principal); on a revocation the
      // event just queued still goes, then `terminated` (-32012) ends the task's subscriptions of that type.
      const principal = queued > 0 && access?.checked ? principalOfOwner(task.owner) : undefined;
      const request = principal && { principal, name: event.type, arguments: { taskId: task.taskId } };
      if (request && !(await (access as EventAccess).stillAllowed(request)))
        await webhooks.terminate({ name: event.type, scope: task.taskId }, ACCESS_REVOKED);
      if (status !== undefined && isTerminal(status))
        await endAll(task.taskId, taskEndedError(task.taskId, { ...task, status }), task.owner);
    });
  });
  // spec V65: what a subscription to a task rests on is the task; once it is removed (deleted, or swept at its TTL
  // while still running) its subscriptions end with the missing task's error instead of waiting out their grant.
  const removed = engine.onTaskRemoved((taskId) =>
    enqueue(taskId, () => endAll(taskId, taskEndedError(taskId, undefined))),
  );
  return {
    stop: () => {
      appended();
      removed();
    },
    serialized,
  };
}

/**
 * The type names of a task's webhook subscriptions, for a process that does not know the server's types (the
 * standalone console): read from the subscriptions of the task's owner.
 */
export type SubscribedTypes = (taskId: string, owner: string) => Promise<readonly string[]>;

/** SubscribedTypes over the store's outbox: the names of the owner's subscriptions scoped to the task. */
export function subscribedTypesOf(store: WebhookOutboxStore): SubscribedTypes {
  return async (taskId, owner) => [
    ...new Set(
      (await store.subscriptionsOf(owner))
        .filter((subscription) => subscription.record.scope === taskId)
        .map((subscription) => subscription.record.name),
    ),
  ];
}

/** The publishing of a process's appends (publishToWebhooks). */
export interface WebhookPublishing {
  stop(): void;
  /**
   * Runs `work` in the task's publishing order: a new subscription's replay, so an event it offers and the same
   * event's live publishing in this process are never queued at the same moment (each checks what is queued first).
   */
  serialized<T>(taskId: string, work: () => Promise<T>): Promise<T>;
}
