import type Database from 'better-sqlite3';

import type { StepJournalStore, StepRow, WakeEntry } from '../../engine/index.js';
import type { GroupCommit } from './GroupCommit.js';
import { PreparedTables } from './PreparedTables.js';

/** Tables of the step journal, created when missing (they sit beside the task table and never change it). */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS mcp_tasks_steps (
    task_id TEXT NOT NULL,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (task_id, name)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS mcp_tasks_fences (
    task_id TEXT PRIMARY KEY,
    attempt INTEGER NOT NULL,
    wake_at INTEGER
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS mcp_tasks_fences_wake ON mcp_tasks_fences (wake_at) WHERE wake_at IS NOT NULL;
`;

/**
 * The step journal in the store's SQLite file: one row per step, and one per task holding its fence (the latest
 * attempt to claim it) and its durable timer. A step write checks the fence in the same statement. Writes share the
 * store's group commit.
 */
export class SqliteStepJournalStore implements StepJournalStore {
  private readonly tables: PreparedTables<ReturnType<typeof prepare>>;

  constructor(
    database: () => Database.Database | undefined,
    private readonly commits: GroupCommit,
  ) {
    this.tables = new PreparedTables('SqliteStepJournalStore', database, SCHEMA, prepare);
  }

  async init(): Promise<void> {
    this.tables.open();
  }

  async fence(taskId: string, attempt: number): Promise<boolean> {
    const s = this.stmts();
    return this.commits.run(() => s.fence.run(taskId, attempt).changes === 1);
  }

  async read(taskId: string): Promise<StepRow[]> {
    return (this.stmts().read.all(taskId) as Array<{ data: string }>).map((row) => JSON.parse(row.data) as StepRow);
  }

  async write(taskId: string, attempt: number, row: StepRow): Promise<boolean> {
    const s = this.stmts();
    const data = JSON.stringify(row);
    return this.commits.run(() => s.write.run(taskId, row.name, data, taskId, attempt).changes === 1);
  }

  async remove(taskId: string): Promise<void> {
    const s = this.stmts();
    await this.commits.run(() => s.remove(taskId));
  }

  async setWake(taskId: string, wakeAt: number): Promise<void> {
    const s = this.stmts();
    await this.commits.run(() => s.setWake.run(taskId, wakeAt));
  }

  async clearWake(taskId: string, wakeAt: number): Promise<void> {
    const s = this.stmts();
    await this.commits.run(() => s.clearWake.run(taskId, wakeAt));
  }

  async due(until: number, limit: number): Promise<WakeEntry[]> {
    const rows = this.stmts().due.all(until, limit) as Array<{ task_id: string; wake_at: number }>;
    return rows.map((row) => ({ taskId: row.task_id, wakeAt: row.wake_at }));
  }

  private stmts(): ReturnType<typeof prepare> {
    return this.tables.get();
  }
}

function prepare(db: Database.Database) {
  const removeSteps = db.prepare('DELETE FROM mcp_tasks_steps WHERE task_id = ?');
  const removeFence = db.prepare('DELETE FROM mcp_tasks_fences WHERE task_id = ?');
  return {
    fence: db.prepare(
      `INSERT INTO mcp_tasks_fences (task_id, attempt) VALUES (?, ?)
       ON CONFLICT (task_id) DO UPDATE SET attempt = excluded.attempt WHERE excluded.attempt >= attempt`,
    ),
    read: db.prepare('SELECT data FROM mcp_tasks_steps WHERE task_id = ?'),
    write: db.prepare(
      `INSERT INTO mcp_tasks_steps (task_id, name, data)
       SELECT ?, ?, ? WHERE (SELECT attempt FROM mcp_tasks_fences WHERE task_id = ?) = ?
       ON CONFLICT (task_id, name) DO UPDATE SET data = excluded.data`,
    ),
    remove: db.transaction((taskId: string) => {
      removeSteps.run(taskId);
      removeFence.run(taskId);
    }),
    setWake: db.prepare(
      `INSERT INTO mcp_tasks_fences (task_id, attempt, wake_at) VALUES (?, 0, ?)
       ON CONFLICT (task_id) DO UPDATE SET wake_at = excluded.wake_at`,
    ),
    clearWake: db.prepare('UPDATE mcp_tasks_fences SET wake_at = NULL WHERE task_id = ? AND wake_at = ?'),
    due: db.prepare(
      'SELECT task_id, wake_at FROM mcp_tasks_fences WHERE wake_at IS NOT NULL AND wake_at <= ? ORDER BY wake_at LIMIT ?',
    ),
  };
}
