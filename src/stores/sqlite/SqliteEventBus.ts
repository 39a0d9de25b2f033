import type Database from 'better-sqlite3';

import {
  eventLogTopic,
  LocalEventBus,
  type TaskChange,
  type TaskEventBus,
  type TaskEventListener,
} from '../../engine/index.js';

/** Task ids checked per query: well under SQLite's bound-parameter limit. */
const CHUNK = 500;

/** Topics of a task's event log (see eventLogTopic): their "version" is the log's length, not a task's version. */
const LOG_TOPIC = eventLogTopic('');

/**
 * Events for processes sharing one SQLite file. Publishes fan out in this process at once; changes committed by
 * another process (or another connection) are noticed by one timer per store that reads `PRAGMA data_version`, a
 * counter SQLite bumps whenever another connection commits to the file. Only when it moved are the versions of the
 * tasks someone here waits on read back, and the changed (or deleted) ones woken, so an idle poll costs one pragma
 * and a busy one a primary-key lookup per watched task. A watched event log topic is woken when its log grew.
 */
export class SqliteEventBus implements TaskEventBus {
  private readonly local: LocalEventBus;
  /** The version last seen of each watched task (null: missing), and how many subscriptions watch it. */
  private readonly watched = new Map<string, { version: number | null; count: number }>();
  private db: Database.Database | undefined;
  private dataVersion: Database.Statement | undefined;
  private versionOf: Database.Statement | undefined;
  private readonly byCount = new Map<number, Database.Statement>();
  private lastDataVersion = 0;
  private timer: NodeJS.Timeout | undefined;

  /** `logLength` reads a task's event log length (the log's own statement), so its topic's readers can be woken. */
  constructor(
    private readonly pollMs: number,
    onListenerError?: (error: unknown) => void,
    private readonly logLength?: (taskId: string) => number,
  ) {
    this.local = new LocalEventBus(onListenerError);
  }

  /** Starts watching the file through `db` (the store's connection). A `pollMs` of 0 keeps events in-process. */
  start(db: Database.Database): void {
    this.db = db;
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.versionOf = db.prepare('SELECT version FROM mcp_tasks WHERE task_id = ?').pluck();
    this.lastDataVersion = this.dataVersion.get() as number;
    if (this.pollMs <= 0) return;
    this.timer = setInterval(() => this.poll(), this.pollMs);
    this.timer.unref();
  }

  publish(taskId: string, change?: TaskChange): void {
    // This connection's own write: the poll need not wake the task's watchers for it a second time.
    const entry = change && this.watched.get(taskId);
    if (entry && change && (entry.version === null || change.version > entry.version)) entry.version = change.version;
    this.local.publish(taskId, change);
  }

  subscribe(taskId: string, listener: TaskEventListener): () => void {
    const entry = this.watched.get(taskId);
    if (entry) entry.count += 1;
    else this.watched.set(taskId, { version: this.readVersion(taskId), count: 1 });
    const unsubscribe = this.local.subscribe(taskId, listener);
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      unsubscribe();
      const current = this.watched.get(taskId);
      if (current && --current.count === 0) this.watched.delete(taskId);
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.watched.clear();
    this.byCount.clear();
    this.db = undefined;
    await this.local.close();
  }

  /** One tick: wakes the watchers of tasks another connection changed since the last tick. */
  poll(): void {
    if (!this.db?.open || !this.dataVersion) return;
    let changed: string[];
    try {
      const version = this.dataVersion.get() as number;
      if (version === this.lastDataVersion) return;
      this.lastDataVersion = version;
      changed = this.changedTasks();
    } catch {
      // A busy or closing file: the next tick (or the engine's re-check) catches up.
      return;
    }
    for (const taskId of changed) this.local.publish(taskId);
  }

  private changedTasks(): string[] {
    const db = this.db as Database.Database;
    const ids: string[] = [];
    const changed: string[] = [];
    for (const [id, entry] of this.watched) {
      if (!id.startsWith(LOG_TOPIC)) ids.push(id);
      else {
        const length = this.readVersion(id);
        if (entry.version === length) continue;
        entry.version = length;
        changed.push(id);
      }
    }
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const rows = this.versionsOf(db, chunk.length).all(...chunk) as Array<{ task_id: string; version: number }>;
      const found = new Map(rows.map((row) => [row.task_id, row.version]));
      for (const taskId of chunk) {
        const entry = this.watched.get(taskId);
        const version = found.get(taskId) ?? null;
        if (!entry || entry.version === version) continue;
        entry.version = version;
        changed.push(taskId);
      }
    }
    return changed;
  }

  /** The versions query for `count` ids, prepared once per size. */
  private versionsOf(db: Database.Database, count: number): Database.Statement {
    let statement = this.byCount.get(count);
    if (!statement) {
      statement = db.prepare(
        `SELECT task_id, version FROM mcp_tasks WHERE task_id IN (${Array(count).fill('?').join(',')})`,
      );
      // Sizes are bounded by CHUNK; keep the cache small anyway.
      if (this.byCount.size >= 16) this.byCount.clear();
      this.byCount.set(count, statement);
    }
    return statement;
  }

  private readVersion(taskId: string): number | null {
    try {
      if (taskId.startsWith(LOG_TOPIC)) return this.readLogLength(taskId.slice(LOG_TOPIC.length));
      return (this.versionOf?.get(taskId) as number | undefined) ?? null;
    } catch {
      return null;
    }
  }

  /** The length of a task's event log; null without a log (or before its table exists: the caller catches). */
  private readLogLength(taskId: string): number | null {
    return this.logLength ? this.logLength(taskId) : null;
  }
}
