import type Database from 'better-sqlite3';

import type { EventAppendResult, LoggedEvent, NewLoggedEvent, TaskEventLog } from '../../engine/index.js';
import type { GroupCommit } from './GroupCommit.js';
import { PreparedTables } from './PreparedTables.js';

/** The event log table, created when missing beside the task table (which it never changes). */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS mcp_tasks_event_log (
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    key TEXT,
    type TEXT NOT NULL,
    at INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX IF NOT EXISTS mcp_tasks_event_log_key ON mcp_tasks_event_log (task_id, key) WHERE key IS NOT NULL;
`;

interface Row {
  seq: number;
  type: string;
  at: number;
  data: string;
}

/** Each task's event log in the store's SQLite file: one row per entry, numbered per task. */
export class SqliteTaskEventLog implements TaskEventLog {
  private readonly tables: PreparedTables<ReturnType<typeof prepare>>;

  /** Writes share the store's group commit. */
  constructor(
    database: () => Database.Database | undefined,
    private readonly commits: GroupCommit,
  ) {
    this.tables = new PreparedTables('SqliteTaskEventLog', database, SCHEMA, prepare);
  }

  async init(): Promise<void> {
    this.tables.open();
  }

  async append(taskId: string, event: NewLoggedEvent, maxEvents: number): Promise<EventAppendResult> {
    const s = this.stmts();
    // Durable before it is announced: a reader told of it must find it after a crash too.
    return this.commits.run(() => {
      if (event.key !== undefined) {
        const known = s.byKey.get(taskId, event.key) as number | undefined;
        if (known !== undefined) return { appended: false, reason: 'duplicate', seq: known };
      }
      const seq = s.length.get(taskId) as number;
      if (seq >= maxEvents) return { appended: false, reason: 'limit' };
      s.insert.run(taskId, seq, event.key ?? null, event.type, event.at, JSON.stringify(event.data));
      return { appended: true, seq };
    });
  }

  async read(taskId: string, from: number, limit: number): Promise<LoggedEvent[]> {
    const rows = this.stmts().read.all(taskId, Math.max(0, from), limit) as Row[];
    return rows.map((row) => ({
      seq: row.seq,
      type: row.type,
      at: row.at,
      data: JSON.parse(row.data) as Record<string, unknown>,
    }));
  }

  async length(taskId: string): Promise<number> {
    return this.lengthNow(taskId);
  }

  /** The task's log length, read at once (the event bus's poll of another process's appends); throws before init(). */
  lengthNow(taskId: string): number {
    return this.stmts().length.get(taskId) as number;
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
  return {
    // Entries are numbered from 0 without gaps and never removed alone, so the next number is the count.
    length: db.prepare('SELECT coalesce(max(seq) + 1, 0) FROM mcp_tasks_event_log WHERE task_id = ?').pluck(),
    byKey: db.prepare('SELECT seq FROM mcp_tasks_event_log WHERE task_id = ? AND key = ?').pluck(),
    insert: db.prepare('INSERT INTO mcp_tasks_event_log (task_id, seq, key, type, at, data) VALUES (?, ?, ?, ?, ?, ?)'),
    read: db.prepare(
      'SELECT seq, type, at, data FROM mcp_tasks_event_log WHERE task_id = ? AND seq >= ? ORDER BY seq LIMIT ?',
    ),
    remove: db.prepare('DELETE FROM mcp_tasks_event_log WHERE task_id = ?'),
  };
}
