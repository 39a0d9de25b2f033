// Over 400 lines: the TaskStore contract on one connection, kept whole because every method shares its prepared
// statements, group commit and record cache; the side tables, WAL flushes and checkpoints are already their own files.
import { randomBytes } from 'node:crypto';

import Database from 'better-sqlite3';

import {
  type EventStreamLog,
  type InsertAlong,
  type InsertResult,
  type ListPosition,
  type OwnerLimitKind,
  type OwnerLimits,
  type ReplaceAlong,
  type StepJournalStore,
  StoreUnavailableError,
  type TaskBrowseStore,
  type TaskEventBus,
  type TaskEventLog,
  type TaskRecord,
  type TaskStore,
  type TaskTimelineStore,
  type WebhookOutboxStore,
} from '../../engine/index.js';
import { Checkpointer } from './Checkpointer.js';
import { GroupCommit } from './GroupCommit.js';
import { SQLITE_MIGRATIONS } from './migrations.js';
import { ReplaceStatements } from './ReplaceStatements.js';
import { RecordCache } from './RecordCache.js';
import { ensurePrivateFile } from './privateFile.js';
import { RunnerLocks } from './RunnerLocks.js';
import { BLOCKING_BUSY_MS, retryBusy, retryWhenBusy } from './retryWhenBusy.js';
import { SqliteEventBus } from './SqliteEventBus.js';
import { SqliteEventStreams } from './SqliteEventStreams.js';
import { SqliteBrowse } from './SqliteBrowse.js';
import { SqliteStepJournalStore } from './SqliteStepJournalStore.js';
import { SqliteTimeline } from './SqliteTimeline.js';
import { SqliteTaskEventLog } from './SqliteTaskEventLog.js';
import { SqliteWebhookOutbox } from './SqliteWebhookOutbox.js';
import { WalSync } from './WalSync.js';

export interface SqliteStoreOptions {
  /** Database file path (created with its directory if missing), or ':memory:'. */
  path: string;
  /**
   * `full` (default) flushes every commit to disk before acknowledging it, so an acknowledged task survives a power
   * loss (the flush runs on the thread pool and is shared by the commits made meanwhile); `normal` survives a process
   * crash only and writes faster.
   */
  durability?: 'full' | 'normal';
  /**
   * With durability `full`: flush the WAL with `fdatasync` on libuv's thread pool (default true), so the event loop
   * goes on while the disk works and the commits made during one flush share the next; false lets SQLite fsync inside
   * each commit (`synchronous=FULL`), holding the event loop for the flush. Either way a write is acknowledged only
   * once on disk. With the flush off the loop, a committed change can be read (by a poll, another process) up to one
   * flush before it is on disk; only a power loss or an operating-system crash in that window takes it back.
   */
  flushOnThreadPool?: boolean;
  /**
   * How long an operation waits for another process holding the file's lock, retrying on timers without blocking
   * the event loop; then it fails with StoreUnavailableError (-32603). Default 5 s.
   */
  busyTimeoutMs?: number;
  /** Page cache size in MiB. Default 64. */
  cacheMiB?: number;
  /**
   * How much of the file is read through a memory map, in MiB. Default 2048 (SQLite's own cap is just under 2 GiB):
   * about 2M tasks. The mapped pages are the operating system's file cache, shared, not copied into the page cache;
   * beyond the map, pages are read with a system call each and kept in the page cache. 0 turns it off.
   */
  mmapMiB?: number;
  /**
   * Decoded records kept for reads of the same task again (polls, the engine's read-modify-write), at most this many
   * and `recordCacheMiB` of stored JSON; always as fresh as the file (see RecordCache). Default 1000; 0 turns it off.
   */
  recordCacheEntries?: number;
  /** Default 16. */
  recordCacheMiB?: number;
  /**
   * How often this process checks whether another process changed the file, to wake its waiters (one
   * `PRAGMA data_version` per tick). Default 20 ms; 0 leaves them to the engine's re-check.
   */
  changePollMs?: number;
}

interface Row {
  data: string;
  lease_until: number | null;
}

/** The store operations that touch the file: each waits for a busy file on timers (retryWhenBusy). */
const BUSY_RETRIED = [
  'insert',
  'get',
  'getByIdempotencyKey',
  'replace',
  'delete',
  'list',
  'countActive',
  'sweepExpired',
  'findStale',
  'renewLeases',
  'markFetched',
  'evictFetched',
  'storedBytes',
  'storedBytesOf',
  'getSecret',
] as const;
const JOURNAL_BUSY_RETRIED = ['init', 'fence', 'read', 'write', 'remove', 'setWake', 'clearWake', 'due'] as const;
const TIMELINE_BUSY_RETRIED = ['init', 'append', 'read', 'remove'] as const;
const EVENT_LOG_BUSY_RETRIED = ['init', 'append', 'read', 'length', 'remove'] as const;
const EVENT_STREAMS_BUSY_RETRIED = ['init', 'epoch', 'append', 'read', 'head'] as const;
const WEBHOOKS_BUSY_RETRIED = [
  'init',
  'saveSubscription',
  'getSubscription',
  'subscriptionsOf',
  'subscriptionsNamed',
  'setStatus',
  'advanceWatermark',
  'deleteSubscription',
  'enqueue',
  'claim',
  'settle',
  'rowsOf',
  'deleteRows',
  'expired',
] as const;
const BROWSE_BUSY_RETRIED = ['init', 'page', 'counts'] as const;

const ACTIVE = `status IN ('working', 'input_required')`;

/**
 * The embedded default store: one SQLite file in WAL mode. Several processes may share the file; each sees every
 * task, and a change committed by one wakes the waiters of the others within `changePollMs`.
 */
export class SqliteStore implements TaskStore {
  readonly kind = 'sqlite';
  readonly insertsAlong = true;
  readonly replacesAlong = true;
  readonly events: TaskEventBus;
  /** Flushes the WAL file off the event loop (durability `full` on a file). */
  private readonly walSync: WalSync | undefined;
  /** Every write goes through it: concurrent writes share one transaction and one fsync. */
  private readonly commits: GroupCommit;
  readonly journal: StepJournalStore;
  readonly timeline: TaskTimelineStore;
  readonly eventLog: TaskEventLog;
  readonly eventStreams: EventStreamLog;
  readonly webhooks: WebhookOutboxStore;
  readonly browse: TaskBrowseStore = new SqliteBrowse(() => this.db);
  /** The event bus and the timeline as this store drives them (started with the database, written in its transactions). */
  private readonly bus: SqliteEventBus;
  private readonly timelineTable: SqliteTimeline;
  /** Proves which runners' processes are gone, so their tasks are taken over at start-up (see RunnerLocks). */
  private readonly runners: RunnerLocks | undefined;
  private readonly cache: RecordCache;
  /** A file, not ':memory:' (which has no WAL, no other process and no runner locks). */
  private readonly inFile: boolean;
  /** Runs the WAL checkpoints on a worker thread (a file store). */
  private checkpointer: Checkpointer | undefined;
  private db: Database.Database | undefined;
  private statements: ReturnType<SqliteStore['prepare']> | undefined;

  constructor(private readonly options: SqliteStoreOptions) {
    this.inFile = options.path !== ':memory:';
    const offLoop = this.inFile && options.durability !== 'normal' && options.flushOnThreadPool !== false;
    this.walSync = offLoop ? new WalSync(`${options.path}-wal`) : undefined;
    this.commits = new GroupCommit(
      () => this.database(),
      this.walSync,
      () => this.checkpointer?.committed(),
    );
    this.cache = new RecordCache(options.recordCacheEntries ?? 1000, (options.recordCacheMiB ?? 16) * 1024 * 1024);
    this.journal = new SqliteStepJournalStore(() => this.db, this.commits);
    this.timelineTable = new SqliteTimeline(() => this.db, this.commits);
    this.timeline = this.timelineTable;
    const eventLog = new SqliteTaskEventLog(() => this.db, this.commits);
    this.eventLog = eventLog;
    this.eventStreams = new SqliteEventStreams(() => this.db, this.commits);
    this.webhooks = new SqliteWebhookOutbox(() => this.db, this.commits);
    this.bus = new SqliteEventBus(this.inFile ? (options.changePollMs ?? 20) : 0, undefined, (taskId) =>
      eventLog.lengthNow(taskId),
    );
    this.events = this.bus;
    if (this.inFile) this.runners = new RunnerLocks(`${options.path}.runners`);
    retryWhenBusy(this, BUSY_RETRIED, this.describe(), options.busyTimeoutMs ?? 5000);
    retryWhenBusy(this.journal, JOURNAL_BUSY_RETRIED, this.describe(), options.busyTimeoutMs ?? 5000);
    retryWhenBusy(this.timeline, TIMELINE_BUSY_RETRIED, this.describe(), options.busyTimeoutMs ?? 5000);
    retryWhenBusy(this.eventLog, EVENT_LOG_BUSY_RETRIED, this.describe(), options.busyTimeoutMs ?? 5000);
    retryWhenBusy(this.eventStreams, EVENT_STREAMS_BUSY_RETRIED, this.describe(), options.busyTimeoutMs ?? 5000);
    retryWhenBusy(this.webhooks, WEBHOOKS_BUSY_RETRIED, this.describe(), options.busyTimeoutMs ?? 5000);
    retryWhenBusy(this.browse, BROWSE_BUSY_RETRIED, this.describe(), options.busyTimeoutMs ?? 5000);
  }

  /** Opens the file; a failure names the store and its cause in one line (a busy file is waited for first). */
  async init(): Promise<void> {
    if (this.db) return;
    try {
      await retryBusy(async () => this.open(), this.describe(), this.options.busyTimeoutMs ?? 5000);
    } catch (error) {
      throw StoreUnavailableError.opening(this.describe(), error);
    }
  }

  private describe(): string {
    return `the SQLite store ${this.options.path}`;
  }

  private open(): void {
    if (this.inFile) ensurePrivateFile(this.options.path);
    const db = new Database(this.options.path);
    try {
      this.configure(db);
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
    this.statements = this.prepare(db);
    this.endLeasesOfDeadRunners();
    this.startCheckpointer(db);
    this.cache.start(db);
    this.bus.start(db);
  }

  private startCheckpointer(db: Database.Database): void {
    if (!this.inFile) return;
    const checkpointer = new Checkpointer(this.options.path, (reason) => {
      // SQLite's own automatic checkpoint again: the WAL stays bounded, at the cost of the event loop's time.
      if (this.db === db && db.open) db.pragma('wal_autocheckpoint = 1000');
      process.emitWarning(
        `mcp-tasks: the SQLite checkpoint worker stopped (${reason}); checkpoints run in commits again`,
      );
    });
    try {
      checkpointer.start(db);
      this.checkpointer = checkpointer;
    } catch {
      // No worker thread to be had: SQLite's automatic checkpoint stays on.
    }
  }

  private configure(db: Database.Database): void {
    db.pragma(`busy_timeout = ${BLOCKING_BUSY_MS}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${this.options.durability === 'normal' ? 'NORMAL' : 'FULL'}`);
    // A larger page cache keeps lookups on a 100k-task database as cheap as on a small one.
    db.pragma(`cache_size = -${(this.options.cacheMiB ?? 64) * 1024}`);
    // Reads through a memory map skip a system call and a copy per page: a random get in a large file costs about
    // half as much as through the page cache, once the page was mapped.
    db.pragma(`mmap_size = ${(this.options.mmapMiB ?? 2048) * 1024 * 1024}`);
    // The savepoint journal of a group commit (the pages its writes changed, to roll one write back alone) stays in
    // memory: past 64 KiB SQLite would spill it to a temporary file, created, written and deleted per transaction.
    // It lives only as long as its transaction, so it has no bearing on durability.
    db.pragma('temp_store = MEMORY');
    migrate(db);
    // Durable commits are flushed by the WalSync, off the event loop; the migration above was flushed by SQLite.
    if (this.walSync) db.pragma('synchronous = NORMAL');
  }

  async close(): Promise<void> {
    if (this.db) await this.commits.drain();
    this.walSync?.close();
    await this.checkpointer?.close();
    this.checkpointer = undefined;
    this.runners?.release();
    await this.events.close();
    this.cache.clear();
    this.db?.close();
    this.db = undefined;
    this.statements = undefined;
  }

  async insert(record: TaskRecord, limits: OwnerLimits = {}, along?: InsertAlong): Promise<InsertResult> {
    const s = this.stmts();
    this.holdRunner(record);
    const timeline = along?.timeline;
    try {
      // The shared transaction takes the file's write lock (IMMEDIATE) before counting, so processes sharing the file
      // count one at a time.
      return await this.commits.run((): InsertResult => {
        const refused = this.overLimit(record, limits);
        if (refused) return refused;
        this.cache.forget(record.taskId);
        s.insert.run(insertColumns(record));
        if (timeline) this.timelineTable.appendNow(record.taskId, timeline.entries, timeline.maxEntries);
        return { inserted: true };
      });
    } catch (error) {
      if (!isConstraintError(error)) throw error;
      if (s.exists.get(record.taskId)) return { inserted: false, reason: 'duplicate_id' };
      const existing =
        record.idempotencyKey === undefined ? undefined : this.readKey(record.owner, record.idempotencyKey);
      if (existing) return { inserted: false, reason: 'duplicate_key', existing };
      throw error;
    }
  }

  /**
   * The tasks of runners whose process is proven gone get a lease that has already ended, so the engine's recovery,
   * which runs as it starts, takes them over now rather than when their leases would have lapsed.
   */
  private endLeasesOfDeadRunners(): void {
    const s = this.stmts();
    try {
      for (const runner of this.runners?.takeDead() ?? []) s.endLeases.run(runner);
    } catch {
      // Without the proof (an unreadable directory), leases lapse as usual.
    }
  }

  /** A runner that takes a lease in this process holds its liveness lock from then on. */
  private holdRunner(record: TaskRecord): void {
    if (record.runner === undefined || record.leaseUntil === undefined) return;
    try {
      this.runners?.hold(record.runner);
    } catch {
      // Without the lock (a read-only directory), the runner's leases lapse as usual after a crash.
    }
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const cached = this.cache.get(taskId);
    if (cached) return cached;
    const row = this.stmts().get.get(taskId) as Row | undefined;
    return row && this.cache.remember(decode(row) as TaskRecord, row.data.length);
  }

  async getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord | undefined> {
    return this.readKey(owner, key);
  }

  async replace(next: TaskRecord, expectedVersion: number, along?: ReplaceAlong): Promise<boolean> {
    // spec R16 R51: the compare-and-set that keeps racing terminal transitions consistent.
    const s = this.stmts();
    this.holdRunner(next);
    const timeline = along?.timeline;
    const written = await this.commits.run(() => {
      // The stored lease may differ from `next`'s (see the statement): the next read takes it from the file.
      this.cache.forget(next.taskId);
      const statement = s.replace.for(next, along?.previous);
      const changed = statement.run({ ...columns(next), expected: expectedVersion }).changes === 1;
      // The timeline entries go in the write's own transaction: one savepoint and one commit for both.
      if (changed && timeline) this.timelineTable.appendNow(next.taskId, timeline.entries, timeline.maxEntries);
      return changed;
    });
    if (written && along) this.events.publish(next.taskId, along.change);
    return written;
  }

  async delete(taskId: string): Promise<boolean> {
    const s = this.stmts();
    return this.commits.run(() => {
      this.cache.forget(taskId);
      return s.delete.run(taskId).changes === 1;
    });
  }

  async list(owner: string, options: { after?: ListPosition; limit: number; now: number }): Promise<TaskRecord[]> {
    const s = this.stmts();
    const rows = options.after
      ? s.listAfter.all({
          owner,
          now: options.now,
          limit: options.limit,
          c: options.after.createdAt,
          i: options.after.taskId,
        })
      : s.listFirst.all({ owner, now: options.now, limit: options.limit });
    return (rows as Row[]).map((row) => decode(row) as TaskRecord);
  }

  async countActive(owner: string): Promise<number> {
    return (this.stmts().countActive.get(owner) as { n: number }).n;
  }

  async sweepExpired(now: number, limit: number): Promise<TaskRecord[]> {
    const s = this.stmts();
    return this.commits.run(() => {
      const rows = s.expired.all(now, limit) as Array<Row & { task_id: string }>;
      for (const row of rows) {
        this.cache.forget(row.task_id);
        s.delete.run(row.task_id);
      }
      return rows.map((row) => decode(row) as TaskRecord);
    });
  }

  async findStale(now: number, limit: number): Promise<TaskRecord[]> {
    return (this.stmts().stale.all(now, limit) as Row[]).map((row) => decode(row) as TaskRecord);
  }

  async renewLeases(runner: string, leaseUntil: number): Promise<void> {
    const s = this.stmts();
    await this.commits.run(() => {
      this.cache.forgetRunner(runner);
      return s.renew.run(leaseUntil, runner);
    });
  }

  async markFetched(taskId: string, at: number): Promise<void> {
    const s = this.stmts();
    // Not in the record: the cached decoded record stays valid.
    await this.commits.run(() => s.markFetched.run(at, taskId));
  }

  async evictFetched(owner: string | undefined, limit: number): Promise<string[]> {
    const s = this.stmts();
    return this.commits.run(() => {
      const ids = (owner === undefined ? s.fetched.all(limit) : s.fetchedOf.all(owner, limit)) as string[];
      for (const taskId of ids) {
        this.cache.forget(taskId);
        s.delete.run(taskId);
      }
      return ids;
    });
  }

  async storedBytes(): Promise<number> {
    return (this.stmts().totalBytes.get() as number | undefined) ?? 0;
  }

  async storedBytesOf(owner: string): Promise<number> {
    return (this.stmts().ownerUsage.get(owner) as { bytes: number } | undefined)?.bytes ?? 0;
  }

  async getSecret(): Promise<Uint8Array> {
    const s = this.stmts();
    await this.commits.run(() => s.insertSecret.run(randomBytes(32)));
    return (s.secret.get() as { value: Buffer }).value;
  }

  /** The refusal when an owner cap is reached; an idempotent retry of a stored task is reported as such first. */
  private overLimit(record: TaskRecord, limits: OwnerLimits): InsertResult | undefined {
    const s = this.stmts();
    const active =
      limits.maxActive !== undefined && (s.countActive.get(record.owner) as { n: number }).n >= limits.maxActive;
    let limit: OwnerLimitKind | undefined = active ? 'active' : undefined;
    if (!limit && (limits.maxStored !== undefined || limits.maxStoredBytes !== undefined)) {
      const usage = s.ownerUsage.get(record.owner) as { stored: number; bytes: number } | undefined;
      if (limits.maxStored !== undefined && (usage?.stored ?? 0) >= limits.maxStored) limit = 'stored';
      else if (limits.maxStoredBytes !== undefined && (usage?.bytes ?? 0) >= limits.maxStoredBytes)
        limit = 'stored_bytes';
    }
    if (!limit) return undefined;
    const existing =
      record.idempotencyKey === undefined ? undefined : this.readKey(record.owner, record.idempotencyKey);
    if (existing) return { inserted: false, reason: 'duplicate_key', existing };
    return { inserted: false, reason: 'limit', limit };
  }

  private readKey(owner: string, key: string): TaskRecord | undefined {
    return decode(this.stmts().byKey.get(owner, key) as Row | undefined);
  }

  private database(): Database.Database {
    if (!this.db) throw new Error('SqliteStore is not initialised (call init)');
    return this.db;
  }

  private stmts(): NonNullable<SqliteStore['statements']> {
    if (!this.statements) throw new Error('SqliteStore is not initialised (call init)');
    return this.statements;
  }

  private prepare(db: Database.Database) {
    return {
      insert: db.prepare(
        `INSERT INTO mcp_tasks (task_id, owner, status, created_at, expires_at, idempotency_key, runner, lease_until, version, data, tool, dialect)
         VALUES (@task_id, @owner, @status, @created_at, @expires_at, @idempotency_key, @runner, @lease_until, @version, @data, @tool, @dialect)`,
      ),
      exists: db.prepare('SELECT 1 FROM mcp_tasks WHERE task_id = ?').pluck(),
      get: db.prepare('SELECT data, lease_until FROM mcp_tasks WHERE task_id = ?'),
      byKey: db.prepare('SELECT data, lease_until FROM mcp_tasks WHERE owner = ? AND idempotency_key = ?'),
      replace: new ReplaceStatements(db),
      delete: db.prepare('DELETE FROM mcp_tasks WHERE task_id = ?'),
      listFirst: db.prepare(
        `SELECT data, lease_until FROM mcp_tasks
         WHERE owner = @owner AND (expires_at IS NULL OR expires_at > @now)
         ORDER BY created_at DESC, task_id DESC LIMIT @limit`,
      ),
      listAfter: db.prepare(
        `SELECT data, lease_until FROM mcp_tasks
         WHERE owner = @owner AND (created_at, task_id) < (@c, @i) AND (expires_at IS NULL OR expires_at > @now)
         ORDER BY created_at DESC, task_id DESC LIMIT @limit`,
      ),
      countActive: db.prepare(`SELECT count(*) AS n FROM mcp_tasks WHERE owner = ? AND ${ACTIVE}`),
      ownerUsage: db.prepare('SELECT stored, bytes FROM mcp_tasks_owners WHERE owner = ?'),
      totalBytes: db.prepare('SELECT bytes FROM mcp_tasks_totals WHERE id = 1').pluck(),
      markFetched: db.prepare(
        `UPDATE mcp_tasks SET fetched_at = ? WHERE task_id = ? AND fetched_at IS NULL AND NOT ${ACTIVE}`,
      ),
      fetchedOf: db
        .prepare('SELECT task_id FROM mcp_tasks WHERE owner = ? AND fetched_at IS NOT NULL ORDER BY fetched_at LIMIT ?')
        .pluck(),
      fetched: db
        .prepare('SELECT task_id FROM mcp_tasks WHERE fetched_at IS NOT NULL ORDER BY fetched_at LIMIT ?')
        .pluck(),
      expired: db.prepare(
        `SELECT task_id, data, lease_until FROM mcp_tasks WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
      ),
      stale: db.prepare(
        `SELECT data, lease_until FROM mcp_tasks WHERE lease_until IS NOT NULL AND lease_until < ? AND ${ACTIVE} LIMIT ?`,
      ),
      endLeases: db.prepare(
        `UPDATE mcp_tasks SET lease_until = 0 WHERE runner = ? AND lease_until IS NOT NULL AND ${ACTIVE}`,
      ),
      renew: db.prepare(
        `UPDATE mcp_tasks SET lease_until = ? WHERE runner = ? AND lease_until IS NOT NULL AND ${ACTIVE}`,
      ),
      insertSecret: db.prepare(`INSERT OR IGNORE INTO mcp_tasks_meta (key, value) VALUES ('cursor_secret', ?)`),
      secret: db.prepare(`SELECT value FROM mcp_tasks_meta WHERE key = 'cursor_secret'`),
    };
  }
}

function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  db.transaction(() => {
    for (let version = current; version < SQLITE_MIGRATIONS.length; version++) {
      db.exec(SQLITE_MIGRATIONS[version] as string);
    }
    db.pragma(`user_version = ${SQLITE_MIGRATIONS.length}`);
  }).immediate();
}

/** The row's columns at insert: also the browse columns, which never change (see migrations.ts). */
function insertColumns(record: TaskRecord) {
  const tool = record.request.params['name'];
  return { ...columns(record), tool: typeof tool === 'string' ? tool : null, dialect: record.dialect };
}

function columns(record: TaskRecord) {
  return {
    task_id: record.taskId,
    owner: record.owner,
    status: record.status,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    idempotency_key: record.idempotencyKey ?? null,
    runner: record.runner ?? null,
    lease_until: record.leaseUntil ?? null,
    version: record.version,
    data: JSON.stringify(record),
  };
}

function decode(row: Row | undefined): TaskRecord | undefined {
  if (!row) return undefined;
  const record = JSON.parse(row.data) as TaskRecord;
  // The lease column is renewed in place without rewriting the record.
  if (row.lease_until === null) delete record.leaseUntil;
  else record.leaseUntil = row.lease_until;
  return record;
}

function isConstraintError(error: unknown): boolean {
  return (
    error instanceof Error &&
    'code' in error &&
    String((error as { code: unknown }).code).startsWith('SQLITE_CONSTRAINT')
  );
}
