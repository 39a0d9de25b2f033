import type { Redis } from 'ioredis';

import {
  encodeTaskEvent,
  LocalEventBus,
  type EngineLogger,
  type TaskChange,
  type TaskEventBus,
  type TaskEventListener,
} from '../../engine/index.js';

export interface RedisEventBusOptions {
  /** Sends PUBLISH; any connection not in subscriber mode. */
  publisher: Redis;
  /** A dedicated connection that this bus puts in subscriber mode and closes with it. */
  subscriber: Redis;
  channel: string;
  logger?: Pick<EngineLogger, 'warn'>;
}

/**
 * Task events over Redis pub/sub: `publish` is `PUBLISH channel payload` (the task id, with the change when known:
 * encodeTaskEvent); the subscriber connection dispatches to
 * local subscribers by task id. ioredis reconnects it and subscribes again by itself; after such a reconnect every
 * local subscriber is woken once, since events published while it was down were lost.
 */
export class RedisEventBus implements TaskEventBus {
  // A throwing subscriber must not stop the others (or surface inside ioredis's event handling).
  private readonly local = new LocalEventBus((error) =>
    this.options.logger?.warn({ error: String(error) }, 'task event listener threw'),
  );
  private readonly subscriber: Redis;
  private started: Promise<void> | undefined;
  private readyBefore = false;
  private closed = false;

  constructor(private readonly options: RedisEventBusOptions) {
    const subscriber = options.subscriber;
    this.subscriber = subscriber;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === options.channel) this.local.dispatch(message);
    });
    // ioredis reports connection errors here and retries; unhandled, they would be logged as unhandled events.
    subscriber.on('error', (error: Error) => options.logger?.warn({ error: String(error) }, 'task event subscriber'));
    subscriber.on('ready', () => {
      if (!this.readyBefore) {
        this.readyBefore = true;
        return;
      }
      // 'ready' fires after ioredis has re-sent SUBSCRIBE; the PING reply proves the server processed it.
      const wake = () => this.wakeAll();
      subscriber.ping().then(wake, wake);
    });
  }

  /** The subscriber's CLIENT SETNAME, if it has one (diagnostics and tests). */
  get connectionName(): string | undefined {
    return this.subscriber.options.connectionName;
  }

  /** Subscribes the connection; resolves once the server confirmed. */
  start(): Promise<void> {
    this.started ??= this.subscriber.subscribe(this.options.channel).then(
      () => undefined,
      (error: unknown) => {
        this.started = undefined;
        throw error;
      },
    );
    return this.started;
  }

  async publish(taskId: string, change?: TaskChange): Promise<void> {
    await this.options.publisher.publish(this.options.channel, encodeTaskEvent(taskId, change));
  }

  subscribe(taskId: string, listener: TaskEventListener): () => void {
    return this.local.subscribe(taskId, listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.local.close();
    await closeConnection(this.subscriber);
  }

  private wakeAll(): void {
    this.local.publishAll();
  }
}

/** QUIT when connected (lets queued replies arrive), otherwise drop the socket and stop reconnecting. */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      // Fall through: the connection broke while quitting.
    }
  }
  redis.disconnect();
}
