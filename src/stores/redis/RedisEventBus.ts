import type { Redis } from 'ioredis';

import type { EngineLogger, TaskEventBus } from '../../engine/index.js';

export interface RedisEventBusOptions {
  /** Sends PUBLISH; any connection not in subscriber mode. */
  publisher: Redis;
  /** A dedicated connection that this bus puts in subscriber mode and closes with it. */
  subscriber: Redis;
  channel: string;
  logger?: Pick<EngineLogger, 'warn'>;
}

/**
 * Task events over Redis pub/sub: `publish` is `PUBLISH channel taskId`; the subscriber connection dispatches to
 * local subscribers by task id. ioredis reconnects it and subscribes again by itself; after such a reconnect every
 * local subscriber is woken once, since events published while it was down were lost.
 */
export class RedisEventBus implements TaskEventBus {
  private readonly listeners = new Map<string, Set<() => void>>();
  private readonly subscriber: Redis;
  private started: Promise<void> | undefined;
  private readyBefore = false;
  private closed = false;

  constructor(private readonly options: RedisEventBusOptions) {
    const subscriber = options.subscriber;
    this.subscriber = subscriber;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === options.channel) this.dispatch(message);
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

  async publish(taskId: string): Promise<void> {
    await this.options.publisher.publish(this.options.channel, taskId);
  }

  subscribe(taskId: string, listener: () => void): () => void {
    let set = this.listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.listeners.set(taskId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(taskId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(taskId);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    await closeConnection(this.subscriber);
  }

  private dispatch(taskId: string): void {
    const set = this.listeners.get(taskId);
    if (!set) return;
    for (const listener of [...set]) this.call(listener);
  }

  private wakeAll(): void {
    for (const set of [...this.listeners.values()]) for (const listener of [...set]) this.call(listener);
  }

  private call(listener: () => void): void {
    // A throwing subscriber must not stop the others (or surface inside ioredis's event handling).
    try {
      listener();
    } catch (error) {
      this.options.logger?.warn({ error: String(error) }, 'task event listener threw');
    }
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
