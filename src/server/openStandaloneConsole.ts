import type { ConsoleOptions, TaskConsole } from '../console/index.js';
import type { EngineLogger, TaskStore } from '../engine/index.js';
import { publishToWebhooks, subscribedTypesOf } from '../events/index.js';
import { OutboxWebhookDeliveries } from '../events/webhooks/index.js';

/** A console over a store no runtime of this process uses, and what it publishes. */
export interface StandaloneConsole {
  readonly taskConsole: TaskConsole;
  close(): void;
}

/**
 * The console of `mcp-tasks console`: its own engine over the servers' store. A task it cancels ends there, so this
 * process publishes what that appends (the status entry) to the store's webhook outbox, and ends the task's webhook
 * subscriptions (spec TS8) as a server would; the servers' senders deliver both. It knows none of the servers' event
 * types, so a task's subscriptions are found through its owner's.
 */
export async function openStandaloneConsole(
  store: TaskStore,
  options: ConsoleOptions,
  logger: EngineLogger,
): Promise<StandaloneConsole> {
  // Loaded here, not at the top: importing the runtime must not load the console.
  const { TaskConsole } = await import('../console/index.js');
  const taskConsole = await TaskConsole.overStore(store, options);
  const outbox = store.webhooks;
  if (!outbox) return { taskConsole, close: () => taskConsole.close() };
  // Publishing only: this deliveries object is never started (the servers' senders deliver).
  const deliveries = new OutboxWebhookDeliveries({ store: outbox });
  const publishing = publishToWebhooks(taskConsole.engine, deliveries, subscribedTypesOf(outbox), logger);
  return {
    taskConsole,
    close() {
      publishing.stop();
      taskConsole.close();
    },
  };
}
