import type Database from 'better-sqlite3';

import type { BrowseFilter, ListPosition, TaskBrowseStore, TaskRecord, TaskStatus } from '../../engine/index.js';

/** Indexes for reads across owners, created when missing (the owner's list index serves an owner filter). */
const SCHEMA = `
  CREATE INDEX IF NOT EXISTS mcp_tasks_created ON mcp_tasks (created_at DESC, task_id DESC);
  CREATE INDEX IF NOT EXISTS mcp_tasks_status_created ON mcp_tasks (status, created_at DESC, task_id DESC);
`;

/** Operators' reads over the SQLite file: each a range of one index, newest first. */
export class SqliteBrowse implements TaskBrowseStore {
  private readonly statements = new Map<string, Database.Statement>();
  private opened: Database.Database | undefined;

  constructor(private readonly database: () => Database.Database | undefined) {}

  async init(): Promise<void> {
    const db = this.database();
    if (!db) throw new Error('SqliteBrowse: the store is not open');
    if (this.opened === db) return;
    db.exec(SCHEMA);
    this.statements.clear();
    this.opened = db;
  }

  async page(
    filter: BrowseFilter,
    options: { after?: ListPosition; limit: number; now: number },
  ): Promise<TaskRecord[]> {
    const where = ['(expires_at IS NULL OR expires_at > @now)'];
    const params: Record<string, unknown> = { now: options.now, limit: options.limit };
    if (filter.status !== undefined) {
      where.push('status = @status');
      params['status'] = filter.status;
    }
    if (filter.owner !== undefined) {
      where.push('owner = @owner');
      params['owner'] = filter.owner;
    }
    if (filter.createdFrom !== undefined) {
      where.push('created_at >= @from');
      params['from'] = filter.createdFrom;
    }
    if (filter.createdTo !== undefined) {
      where.push('created_at < @to');
      params['to'] = filter.createdTo;
    }
    if (options.after) {
      where.push('(created_at, task_id) < (@c, @i)');
      params['c'] = options.after.createdAt;
      params['i'] = options.after.taskId;
    }
    const sql = `SELECT data, lease_until FROM mcp_tasks WHERE ${where.join(' AND ')}
                 ORDER BY created_at DESC, task_id DESC LIMIT @limit`;
    const rows = this.statement(sql).all(params) as Array<{ data: string; lease_until: number | null }>;
    return rows.map((row) => {
      const record = JSON.parse(row.data) as TaskRecord;
      if (row.lease_until === null) delete record.leaseUntil;
      else record.leaseUntil = row.lease_until;
      return record;
    });
  }

  async counts(): Promise<Partial<Record<TaskStatus, number>>> {
    const rows = this.statement('SELECT status, count(*) AS n FROM mcp_tasks GROUP BY status').all() as Array<{
      status: TaskStatus;
      n: number;
    }>;
    return Object.fromEntries(rows.map((row) => [row.status, row.n]));
  }

  private statement(sql: string): Database.Statement {
    const db = this.opened;
    if (!db || db !== this.database()) throw new Error('SqliteBrowse: init() has not run');
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = db.prepare(sql)));
    return statement;
  }
}
