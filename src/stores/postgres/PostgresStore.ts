import { randomBytes } from 'node:crypto';

import pg from 'pg';

import {
  type EngineLogger,
  type EventStreamLog,
  type InsertAlong,
  type InsertResult,
  type ListPosition,
  type OwnerLimits,
  redactUrl,
  type ReplaceAlong,
  type StepJournalStore,
  STORE_WAIT_MS,
  StoreUnavailableError,
  type TaskBrowseStore,
  type TaskEventLog,
  type TaskRecord,
  type TaskStore,
  type TaskTimelineStore,
  type WebhookOutboxStore,
} from '../../engine/index.js';
import { migratePostgres } from './migrations.js';
import { PgBrowse } from './PgBrowse.js';
import { PgEventBus } from './PgEventBus.js';
import { PgEventStreams } from './PgEventStreams.js';
import { PgBatch } from './PgBatch.js';
import { PgStatements } from './PgStatements.js';
import { PgStepJournalStore } from './PgStepJournalStore.js';
import { pgNames, type PgNames } from './pgNames.js';
import {
  ACTIVE,
  decode,
  int8AsNumber,
  type CappedInsert,
  type InsertOutcome,
  type Replacement,
  type Row,
} from './pgTaskRows.js';
import { PgTaskWrites } from './PgTaskWrites.js';
import { PgTimeline } from './PgTimeline.js';
import { PgTaskEventLog } from './PgTaskEventLog.js';
import { PgWebhookOutbox } from './PgWebhookOutbox.js';
import { waitForConnection } from './waitForConnection.js';
import { pgWriteFailure } from './pgOutcome.js';

export interface PostgresStoreOptions {
  /** Connection for the store's own pool and for the LISTEN connection. Required unless `pool` is given. */
  connectionString?: string;
  /** An existing pool to share; `close()` leaves it open. The LISTEN connection copies its settings. */
  pool?: pg.Pool;
  /** Size of the store's own pool. Default 10. */
  poolSize?: number;
  /** Schema of the tables (created when missing). Default 'public'. */
  schema?: string;
  /** Table name and prefix of the other tables and indexes. Default 'mcp_tasks'. */
  tablePrefix?: string;
  /** NOTIFY channel. Default: derived from schema and prefix (just the prefix in 'public'). */
  channel?: string;
  /**
   * Named (prepared) statements, planned once per connection. Default true; false for a pooler that cannot keep them
   * (PgBouncer in transaction mode before 1.21, without `max_prepared_statements`).
   */
  preparedStatements?: boolean;
  /**
   * How long a statement of the store's own pool waits for a connection (retried every 500 ms at most) before it is
   * refused unsent, as Redis commands do. Default 5 s.
   */
  connectWaitMs?: number;
  logger?: Pick<EngineLogger, 'warn'>;
}

const SECRET_KEY = 'cursor_secret';

/**
 * Tasks in one PostgreSQL table, shared by every process using the same database, schema and prefix.
 * The record is kept whole in `data`; the columns beside it exist for indexes, the compare-and-set and the lease,
 * which `renewLeases` updates in place (reads take the lease from the column, not from `data`).
 */
export class PostgresStore implements TaskStore {
  readonly kind = 'postgres';
  readonly insertsAlong = true;
  readonly replacesAlong = true;
  readonly events: PgEventBus;
  readonly journal: StepJournalStore;
  readonly timeline: TaskTimelineStore;
  readonly eventLog: TaskEventLog;
  readonly eventStreams: EventStreamLog;
  readonly webhooks: WebhookOutboxStore;
  readonly browse: TaskBrowseStore;
  private readonly pool: pg.Pool;
  private readonly ownPool: boolean;
  private readonly names: PgNames;
  private readonly schema: string;
  private initialising: Promise<void> | undefined;
  private secret: Uint8Array | undefined;
  private closed = false;
  private readonly description: string;
  private readonly statements: PgStatements;
  private readonly channel: string;
  private readonly writes: PgTaskWrites;
  /** Concurrent creations and transitions go to the database together (group commit, see PgBatch). */
  private readonly inserts = new PgBatch<CappedInsert, InsertOutcome>(
    (items) => this.writes.insertMany(items),
    (item) => this.writes.insertOne(item),
    (item) => item.record.taskId,
  );
  /** Reads of tasks issued while a batch of them is on its way go together too (one statement, one round trip). */
  private readonly reads = new PgBatch<{ taskId: string }, TaskRecord | undefined>(
    (items) => this.getMany(items.map((item) => item.taskId)),
    (item) => this.getOne(item.taskId),
    (item) => item.taskId,
  );
  private readonly replaces = new PgBatch<Replacement, boolean>(
    (items) => this.writes.replaceMany(items),
    (item) => this.writes.replaceOne(item),
    (item) => item.next.taskId,
  );

  constructor(options: PostgresStoreOptions) {
    if (!options.pool && !options.connectionString) throw new Error('PostgresStore needs a connectionString or a pool');
    this.description = `the PostgreSQL store ${options.connectionString ? redactUrl(options.connectionString) : '(a shared pool)'}`;
    this.schema = options.schema ?? 'public';
    this.names = pgNames(this.schema, options.tablePrefix ?? 'mcp_tasks');
    this.ownPool = !options.pool;
    this.statements = new PgStatements(options.preparedStatements ?? true);
    this.channel = options.channel ?? this.names.channel;
    const connectWaitMs = options.connectWaitMs ?? STORE_WAIT_MS;
    this.pool =
      options.pool ??
      new pg.Pool({
        connectionString: options.connectionString,
        max: options.poolSize ?? 10,
        // A frozen server accepts the socket and never answers: connecting gives up at the same bound.
        connectionTimeoutMillis: connectWaitMs,
      });
    // An idle pooled connection that dies emits 'error' on the pool; unhandled, it would crash the process.
    if (this.ownPool) {
      waitForConnection(this.pool, connectWaitMs);
      this.pool.on('error', (error) => options.logger?.warn({ error: String(error) }, 'postgres pool connection lost'));
    }
    const listenerConfig: pg.ClientConfig = options.pool
      ? { ...options.pool.options }
      : { connectionString: options.connectionString };
    this.journal = new PgStepJournalStore(this.pool, this.schema, options.tablePrefix ?? 'mcp_tasks');
    const timeline = new PgTimeline(this.pool, this.schema, options.tablePrefix ?? 'mcp_tasks', this.statements);
    this.timeline = timeline;
    this.browse = new PgBrowse(this.pool, this.names);
    this.eventLog = new PgTaskEventLog(this.pool, this.schema, options.tablePrefix ?? 'mcp_tasks');
    this.eventStreams = new PgEventStreams(this.pool, this.schema, options.tablePrefix ?? 'mcp_tasks');
    this.webhooks = new PgWebhookOutbox(this.pool, this.schema, options.tablePrefix ?? 'mcp_tasks');
    this.writes = new PgTaskWrites(
      (text, values) => this.query(text, values),
      this.names,
      timeline.table,
      this.channel,
    );
    this.events = new PgEventBus({
      pool: this.pool,
      preparedStatements: options.preparedStatements ?? true,
      listenerConfig: { application_name: 'mcp-tasks-events', ...listenerConfig },
      channel: this.channel,
      ...(options.logger && { logger: options.logger }),
    });
  }

  /** Applies migrations and opens the LISTEN connection. */
  init(): Promise<void> {
    this.initialising ??= (async () => {
      await migratePostgres(this.pool, this.names, this.schema);
      await this.events.start();
    })().catch((error: unknown) => {
      // One line naming the store and the cause, for start-up failures (the password is never printed).
      const failure = StoreUnavailableError.opening(this.description, error);
      // Let a later init() try again (e.g. the engine restarted once the database is back).
      this.initialising = undefined;
      throw failure;
    });
    return this.initialising;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.events.close();
    if (this.ownPool) await this.pool.end();
  }

  async insert(record: TaskRecord, limits: OwnerLimits = {}, along?: InsertAlong): Promise<InsertResult> {
    const t = this.names.tasks;
    // ON CONFLICT DO NOTHING covers the primary key and the idempotency index without aborting anything;
    // the loop only repeats if the conflicting row disappears before it can be reported.
    for (let attempt = 0; attempt < 5; attempt++) {
      const item = { record, limits, ...(along?.timeline && { timeline: along.timeline }) };
      // The first attempt shares a statement with concurrent creations; a repeat goes alone.
      const outcome = await (attempt === 0 ? this.inserts.run(item) : this.writes.insertOne(item)).catch(
        (error: unknown) => {
          throw pgWriteFailure(error);
        },
      );
      if (outcome === 'ok') return { inserted: true };
      if (outcome === 'conflict') {
        const exists = await this.query(`SELECT 1 FROM ${t} WHERE task_id = $1`, [record.taskId]);
        if (exists.rowCount === 1) return { inserted: false, reason: 'duplicate_id' };
      }
      // An idempotent retry of a stored task is reported as such, rather than as a cap.
      if (record.idempotencyKey !== undefined) {
        const existing = await this.getByIdempotencyKey(record.owner, record.idempotencyKey);
        if (existing) return { inserted: false, reason: 'duplicate_key', existing };
      }
      if (outcome !== 'conflict') return { inserted: false, reason: 'limit', limit: outcome };
    }
    throw new Error(`Could not insert task ${record.taskId}: conflicting rows kept changing`);
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    // A fresh object per read: the batch tells its items apart by identity.
    return this.reads.run({ taskId });
  }

  private getOne(taskId: string): Promise<TaskRecord | undefined> {
    return this.one(`SELECT data, lease_until FROM ${this.names.tasks} WHERE task_id = $1`, [taskId]);
  }

  /** Reads of several tasks in one statement. */
  private async getMany(taskIds: string[]): Promise<Array<TaskRecord | undefined>> {
    const { rows } = await this.query<Row & { task_id: string }>(
      `SELECT task_id, data, lease_until FROM ${this.names.tasks} WHERE task_id = ANY($1::text[])`,
      [taskIds],
    );
    const found = new Map(rows.map((row) => [row.task_id, decode(row)]));
    return taskIds.map((taskId) => found.get(taskId));
  }

  async getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord | undefined> {
    return this.one(`SELECT data, lease_until FROM ${this.names.tasks} WHERE owner = $1 AND idempotency_key = $2`, [
      owner,
      key,
    ]);
  }

  async replace(next: TaskRecord, expectedVersion: number, along?: ReplaceAlong): Promise<boolean> {
    // spec R16 R51: the compare-and-set that keeps racing terminal transitions consistent. Under READ COMMITTED a
    // writer blocked on the row re-checks `version` after the winner commits, so only one matches.
    // owner, created_at and idempotency_key never change after insert, like the indexes built on them.
    return this.replaces.run({ next, expectedVersion, ...(along && { along }) });
  }

  async delete(taskId: string): Promise<boolean> {
    return (await this.query(`DELETE FROM ${this.names.tasks} WHERE task_id = $1`, [taskId])).rowCount === 1;
  }

  async list(owner: string, options: { after?: ListPosition; limit: number; now: number }): Promise<TaskRecord[]> {
    const t = this.names.tasks;
    const live = '(expires_at IS NULL OR expires_at > $2)';
    // The row-value comparison walks the (owner, created_at DESC, task_id DESC) index from the cursor on.
    const rows = options.after
      ? await this.rows(
          `SELECT data, lease_until FROM ${t}
           WHERE owner = $1 AND (created_at, task_id) < ($4, $5) AND ${live}
           ORDER BY created_at DESC, task_id DESC LIMIT $3`,
          [owner, options.now, options.limit, options.after.createdAt, options.after.taskId],
        )
      : await this.rows(
          `SELECT data, lease_until FROM ${t} WHERE owner = $1 AND ${live}
           ORDER BY created_at DESC, task_id DESC LIMIT $3`,
          [owner, options.now, options.limit],
        );
    return rows;
  }

  async countActive(owner: string): Promise<number> {
    const result = await this.query<{ n: number }>(
      `SELECT count(*) AS n FROM ${this.names.tasks} WHERE owner = $1 AND ${ACTIVE}`,
      [owner],
    );
    return result.rows[0]?.n ?? 0;
  }

  async sweepExpired(now: number, limit: number): Promise<TaskRecord[]> {
    const t = this.names.tasks;
    // SKIP LOCKED: concurrent sweepers take disjoint batches, and a row being updated right now is left for later.
    return this.rows(
      `DELETE FROM ${t} WHERE task_id IN (
         SELECT task_id FROM ${t} WHERE expires_at IS NOT NULL AND expires_at <= $1
         ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ) RETURNING data, lease_until`,
      [now, limit],
    );
  }

  async findStale(now: number, limit: number): Promise<TaskRecord[]> {
    return this.rows(
      `SELECT data, lease_until FROM ${this.names.tasks}
       WHERE lease_until IS NOT NULL AND lease_until < $1 AND ${ACTIVE} ORDER BY lease_until LIMIT $2`,
      [now, limit],
    );
  }

  async renewLeases(runner: string, leaseUntil: number): Promise<void> {
    // Only the lease column changes; `data` is not rewritten and `version` stays (a renewal is not a task change).
    await this.query(
      `UPDATE ${this.names.tasks} SET lease_until = $1 WHERE runner = $2 AND lease_until IS NOT NULL AND ${ACTIVE}`,
      [leaseUntil, runner],
    );
  }

  async markFetched(taskId: string, at: number): Promise<void> {
    await this.query(
      `UPDATE ${this.names.tasks} SET fetched_at = $2 WHERE task_id = $1 AND fetched_at IS NULL AND NOT ${ACTIVE}`,
      [taskId, at],
    );
  }

  async evictFetched(owner: string | undefined, limit: number): Promise<string[]> {
    const t = this.names.tasks;
    // SKIP LOCKED: concurrent evictions take disjoint tasks; a row being written right now is left for later.
    // Two statements, not one with an optional owner: each is planned on its own index.
    const whose = owner === undefined ? '' : 'AND owner = $2';
    const { rows } = await this.query<{ task_id: string; fetched_at: string }>(
      `DELETE FROM ${t} WHERE task_id IN (
         SELECT task_id FROM ${t} WHERE fetched_at IS NOT NULL ${whose}
         ORDER BY fetched_at LIMIT $1 FOR UPDATE SKIP LOCKED
       ) RETURNING task_id, fetched_at`,
      owner === undefined ? [limit] : [limit, owner],
    );
    return rows.sort((a, b) => Number(a.fetched_at) - Number(b.fetched_at)).map((row) => row.task_id);
  }

  async storedBytes(): Promise<number> {
    // A sum over owners (the engine reads it at most every second): one counter row for every process would
    // serialize all writes on its lock.
    const { rows } = await this.query<{ n: string }>(
      `SELECT coalesce(sum(bytes), 0) AS n FROM ${this.names.owners}`,
      [],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async storedBytesOf(owner: string): Promise<number> {
    const { rows } = await this.query<{ n: string }>(`SELECT bytes AS n FROM ${this.names.owners} WHERE owner = $1`, [
      owner,
    ]);
    return Number(rows[0]?.n ?? 0);
  }

  async getSecret(): Promise<Uint8Array> {
    if (this.secret) return this.secret;
    const meta = this.names.meta;
    // The first process to get here wins; everyone else reads its value.
    await this.query(`INSERT INTO ${meta} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [
      SECRET_KEY,
      randomBytes(32),
    ]);
    const result = await this.query<{ value: Buffer }>(`SELECT value FROM ${meta} WHERE key = $1`, [SECRET_KEY]);
    const value = result.rows[0]?.value;
    if (!value) throw new Error('PostgresStore: the cursor secret is missing after insert');
    this.secret = new Uint8Array(value);
    return this.secret;
  }

  private query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    // Per-query type parsers, so a shared pool keeps its own settings.
    return this.pool.query<R>(this.statements.config(text, values, int8AsNumber));
  }

  private async rows(text: string, values: unknown[]): Promise<TaskRecord[]> {
    return (await this.query<Row>(text, values)).rows.map(decode);
  }

  private async one(text: string, values: unknown[]): Promise<TaskRecord | undefined> {
    const row = (await this.query<Row>(text, values)).rows[0];
    return row && decode(row);
  }
}
