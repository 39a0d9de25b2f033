import pg from 'pg';

import {
  encodeTaskEvent,
  LocalEventBus,
  type EngineLogger,
  type TaskChange,
  type TaskEventBus,
  type TaskEventListener,
} from '../../engine/index.js';
import { quoteIdent } from './pgNames.js';
import { PgStatements } from './PgStatements.js';

const NOTIFY = 'SELECT pg_notify($1, $2)';

export interface PgEventBusOptions {
  /** Publishes go through the pool; listening needs its own connection, opened with `listenerConfig`. */
  pool: pg.Pool;
  listenerConfig: pg.ClientConfig;
  channel: string;
  /** Publishes as a named (prepared) statement, planned once per connection. Default false. */
  preparedStatements?: boolean;
  logger?: Pick<EngineLogger, 'warn'>;
  /** Reconnect backoff after the LISTEN connection drops: first retry immediately, then doubling up to the max. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

/**
 * Task events over PostgreSQL LISTEN/NOTIFY: `publish` is `pg_notify(channel, payload)` (the task id, with the change
 * when known: encodeTaskEvent), and one dedicated connection
 * per bus LISTENs and dispatches to local subscribers by task id. A dropped connection is reopened with backoff;
 * after a reopen every local subscriber is woken once, since events sent while it was down were lost.
 */
export class PgEventBus implements TaskEventBus {
  // A throwing subscriber must not break the connection's message handling or the other subscribers.
  private readonly local = new LocalEventBus((error) =>
    this.options.logger?.warn({ error: String(error) }, 'task event listener threw'),
  );
  private client: pg.Client | undefined;
  private pid: number | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  private readonly statements: PgStatements;

  constructor(private readonly options: PgEventBusOptions) {
    this.statements = new PgStatements(options.preparedStatements ?? false);
  }

  /** Opens the LISTEN connection; rejects when the first attempt fails (later drops are retried forever). */
  async start(): Promise<void> {
    if (this.client || this.closed) return;
    await this.open();
  }

  /** The backend pid of the LISTEN connection while it is up (diagnostics and tests). */
  get backendPid(): number | undefined {
    return this.pid;
  }

  async publish(taskId: string, change?: TaskChange): Promise<void> {
    const values = [this.options.channel, encodeTaskEvent(taskId, change)];
    await this.options.pool.query(this.statements.config(NOTIFY, values));
  }

  subscribe(taskId: string, listener: TaskEventListener): () => void {
    return this.local.subscribe(taskId, listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.pid = undefined;
    await this.local.close();
    await client?.end().catch(() => {});
  }

  private async open(): Promise<void> {
    const client = new pg.Client({ ...this.options.listenerConfig, keepAlive: true });
    client.on('notification', (message) => {
      if (message.channel === this.options.channel && message.payload) this.local.dispatch(message.payload);
    });
    // Without an 'error' listener a dropped connection would crash the process.
    client.on('error', (error) => this.dropped(client, error));
    client.on('end', () => this.dropped(client));
    let pid: number;
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.options.channel)}`);
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      pid = rows[0]?.pid as number;
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.pid = pid;
  }

  private dropped(client: pg.Client, error?: Error): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.pid = undefined;
    this.options.logger?.warn({ error: String(error ?? 'connection ended') }, 'task event listener disconnected');
    client.end().catch(() => {});
    this.reconnect(0);
  }

  private reconnect(attempt: number): void {
    if (this.closed) return;
    const min = this.options.reconnectMinMs ?? 100;
    const max = this.options.reconnectMaxMs ?? 5000;
    const delay = attempt === 0 ? 0 : Math.min(max, min * 2 ** (attempt - 1));
    this.retry = setTimeout(() => {
      this.open().then(
        () => this.wakeAll(),
        (error: unknown) => {
          this.options.logger?.warn({ error: String(error), attempt }, 'task event listener reconnect failed');
          this.reconnect(attempt + 1);
        },
      );
    }, delay);
    this.retry.unref();
  }

  private wakeAll(): void {
    this.local.publishAll();
  }
}
