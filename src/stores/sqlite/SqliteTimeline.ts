import type Database from 'better-sqlite3';

import type { TaskTimelineStore, TimelineEntry } from '../../engine/index.js';
import type { GroupCommit } from './GroupCommit.js';
import { PreparedTables } from './PreparedTables.js';

/** The timeline table, created when missing beside the task table (which it never changes). */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS mcp_tasks_timeline (
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
  ) WITHOUT ROWID;
`;

/** Each task's timeline in the store's SQLite file: one row per entry, numbered per task. */
export class SqliteTimeline implements TaskTimelineStore {
  private readonly tables: PreparedTables<ReturnType<typeof prepare>>;

  /** Writes share the store's group commit. */
  constructor(
    database: () => Database.Database | undefined,
    private readonly commits: GroupCommit,
  ) {
    this.tables = new PreparedTables('SqliteTimeline', database, SCHEMA, prepare);
  }

  async init(): Promise<void> {
    this.tables.open();
  }

  /** Appends inside the caller's transaction (the store's insert or replace with `along`): throws if init() has not run. */
  appendNow(taskId: string, entries: TimelineEntry[], maxEntries: number): void {
    this.stmts().append(taskId, entries, maxEntries);
  }

  async append(taskId: string, entries: TimelineEntry[], maxEntries: number): Promise<void> {
    const s = this.stmts();
    // A history entry: visible at once, flushed to disk with the next durable write (never before the transition it
    // records, which committed first).
    await this.commits.run(() => s.append(taskId, entries, maxEntries), { durable: false });
  }

  async read(taskId: string): Promise<TimelineEntry[]> {
    const rows = this.stmts().read.all(taskId) as Array<{ data: string }>;
    return rows.map((row) => JSON.parse(row.data) as TimelineEntry);
  }

  async remove(taskId: string): Promise<void> {
    const s = this.stmts();
    await this.commits.run(() => s.remove.run(taskId));
  }

  private stmts(): ReturnType<typeof prepare> {
    return this.tables.get();
  }
}

function prepare(db: Database.Database) {
  const last = db.prepare('SELECT coalesce(max(seq), 0) FROM mcp_tasks_timeline WHERE task_id = ?').pluck();
  const insert = db.prepare('INSERT INTO mcp_tasks_timeline (task_id, seq, data) VALUES (?, ?, ?)');
  // Keeps the first entry and the newest ones: entries of a long task past the bound go from the middle.
  const trim = db.prepare(
    `DELETE FROM mcp_tasks_timeline WHERE task_id = @taskId AND seq <= @upTo
       AND seq > (SELECT min(seq) FROM mcp_tasks_timeline WHERE task_id = @taskId)`,
  );
  return {
    // Always run inside a transaction of the group commit (a lone write's, or a savepoint of a shared one), which makes
    // its statements atomic: a savepoint of its own would only add two statements per entry written.
    append: (taskId: string, entries: TimelineEntry[], maxEntries: number) => {
      let seq = last.get(taskId) as number;
      for (const entry of entries) insert.run(taskId, ++seq, JSON.stringify(entry));
      if (seq > maxEntries) trim.run({ taskId, upTo: seq - Math.max(1, maxEntries - 1) });
    },
    read: db.prepare('SELECT data FROM mcp_tasks_timeline WHERE task_id = ? ORDER BY seq'),
    remove: db.prepare('DELETE FROM mcp_tasks_timeline WHERE task_id = ?'),
  };
}
