import type { EngineLogger, TaskEngine, TaskStore } from '../engine/index.js';
import { EventCatalog, type EventTypeOptions } from './EventCatalog.js';
import { EmittedEvents, type EmitEventOptions } from './EmittedEvents.js';
import { DEFAULT_REVERIFY_MS, EventAccess, type EventAuthorizer } from './EventAccess.js';
import { publishToWebhooks } from './publishToWebhooks.js';
import { OutboxWebhookDeliveries } from './webhooks/OutboxWebhookDeliveries.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';

/** A queue worker's share of serving events (`runWorker({ events })`): the server instances' types, and webhooks. */
export interface WorkerEventsOptions {
  /** The event types the server instances register (`createMcpTasks({ events: { types } })`). */
  types?: readonly EventTypeOptions[];
  /**
   * Publish this worker's appends (its tasks' emits and status changes) to webhook subscriptions: `true` writes them
   * to the store's durable outbox with the default limits, for the server instances' senders to deliver; or the
   * deliveries to publish to (the same limits as the servers'). Off by default: without it, webhook subscribers of a
   * task run by this worker hear nothing of it.
   */
  webhooks?: boolean | WebhookDeliveries;
  /**
   * The server instances' `events.authorize`: with `webhooks`, a task's webhook subscriptions are re-verified with it
   * as this worker publishes (spec V65), every `reverifyMs` (default 60 s) at most.
   */
  authorize?: EventAuthorizer;
  reverifyMs?: number;
}

/**
 * The event checks of a worker's engine (the same catalog the servers check against, and the task status entries),
 * then, once the engine exists, the publishing of its appends to webhooks. Each append is published by the process
 * that made it, so N servers and M workers on one store publish every event exactly once.
 */
export class WorkerEvents {
  readonly catalog: EventCatalog;
  private emitted: EmittedEvents | undefined;

  constructor(private readonly options: WorkerEventsOptions) {
    this.catalog = new EventCatalog(
      options.types ?? [],
      options.webhooks ? ['poll', 'push', 'webhook'] : ['poll', 'push'],
    );
  }

  /** The settings of the worker's engine. */
  get engineOptions(): { checkEvent: EventCatalog['check']; statusEvents: true } {
    return { checkEvent: this.catalog.check, statusEvents: true };
  }

  /**
   * Starts publishing the engine's appends to webhooks (when asked), once the store is open; returns the removal.
   */
  async attach(engine: TaskEngine, store: TaskStore, logger: EngineLogger): Promise<() => void> {
    const webhooks = this.options.webhooks;
    let deliveries: WebhookDeliveries | undefined;
    if (webhooks === true) {
      if (!store.webhooks) throw new Error('runWorker events.webhooks: the task store keeps no webhook outbox');
      await store.webhooks.init();
      // Publishing only: the senders of the server instances deliver what it writes (this one is never started).
      deliveries = new OutboxWebhookDeliveries({ store: store.webhooks });
    } else if (webhooks) deliveries = webhooks;
    const emitted = new EmittedEvents(
      this.catalog,
      deliveries,
      () => engine.limits.maxEventBytes,
      () => logger,
    );
    emitted.useStore(store);
    this.emitted = emitted;
    if (!deliveries) return () => emitted.close();
    const access = new EventAccess(this.options.authorize, this.options.reverifyMs ?? DEFAULT_REVERIFY_MS);
    const publishing = publishToWebhooks(engine, deliveries, this.catalog.names, logger, access);
    return () => {
      publishing.stop();
      emitted.close();
    };
  }

  /**
   * The worker's `emitEvent`: an event of an untasked type with `retain.durable` (EmittedEvents.emit), which the
   * server instances serve from the store. A type kept per process is refused: in a worker no one would read it.
   */
  emit(name: string, data: Record<string, unknown>, options?: EmitEventOptions): Promise<string> {
    if (this.catalog.isUntasked(name) && !this.catalog.durable(name))
      return Promise.reject(
        new TypeError(
          `Event type ${name} is kept per process, and a queue worker serves no one: give it retain.durable to emit it here`,
        ),
      );
    if (!this.emitted) return Promise.reject(new Error('emitEvent: the worker has not started'));
    return this.emitted.emit(name, data, options);
  }
}
