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
  readonly indexedFilters = ['tool', 'dialect'] as const;

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
    const { where, params } = this.range(filter, options);
    params['limit'] = options.limit;
    const sql = `SELECT data, lease_until FROM mcp_tasks WHERE ${where}
                 ORDER BY created_at DESC, task_id DESC LIMIT @limit`;
    return (this.statement(sql).all(params) as Row[]).map(recordOf);
  }

  async searchText(
    filter: BrowseFilter,
    text: string,
    options: { after?: ListPosition; limit: number; budget: number; now: number },
  ): Promise<{ records: TaskRecord[]; scanned: number; next?: ListPosition }> {
    const { where, params } = this.range(filter, options);
    Object.assign(params, { budget: options.budget, limit: options.limit, text });
    // The budget's rows in page order, the text looked for in SQL: only matching rows are read out and parsed.
    const scanned = `SELECT task_id, created_at, idempotency_key, data, lease_until FROM mcp_tasks WHERE ${where}
                     ORDER BY created_at DESC, task_id DESC LIMIT @budget`;
    const rows = this.statement(
      `WITH scanned AS MATERIALIZED (${scanned}),
       hits AS (
         SELECT data, lease_until, created_at, task_id, 1 AS hit FROM scanned
         WHERE instr(lower(task_id), @text) > 0 OR instr(lower(coalesce(idempotency_key, '')), @text) > 0
            OR instr(lower(coalesce(data -> '$.request.params.arguments', 'null')), @text) > 0
         ORDER BY created_at DESC, task_id DESC LIMIT @limit
       ),
       tail AS (SELECT NULL, NULL, created_at, task_id, 0 FROM scanned ORDER BY created_at ASC, task_id ASC LIMIT 1)
       SELECT *, (SELECT count(*) FROM scanned) AS n FROM (SELECT * FROM hits UNION ALL SELECT * FROM tail)`,
    ).all(params) as Array<Row & { created_at: number; task_id: string; hit: number; n: number }>;
    // One statement: the matches (newest first), then the last task read, each row with the number read.
    const hits = rows.filter((row) => row.hit === 1);
    const tail = rows.find((row) => row.hit === 0);
    const scannedCount = rows[0]?.n ?? 0;
    const records = hits.map(recordOf);
    const last = hits.at(-1);
    if (last && hits.length >= options.limit) {
      return { records, scanned: scannedCount, next: { createdAt: last.created_at, taskId: last.task_id } };
    }
    if (!tail || scannedCount < options.budget) return { records, scanned: scannedCount };
    return { records, scanned: scannedCount, next: { createdAt: tail.created_at, taskId: tail.task_id } };
  }

  private range(
    filter: BrowseFilter,
    options: { after?: ListPosition; now: number },
  ): { where: string; params: Record<string, unknown> } {
    const where = ['(expires_at IS NULL OR expires_at > @now)'];
    const params: Record<string, unknown> = { now: options.now };
    // Each an indexed column of the same name.
    for (const column of ['status', 'owner', 'tool', 'dialect'] as const) {
      if (filter[column] === undefined) continue;
      where.push(`${column} = @${column}`);
      params[column] = filter[column];
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
    return { where: where.join(' AND '), params };
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

type Row = { data: string; lease_until: number | null };

function recordOf(row: Row): TaskRecord {
  const record = JSON.parse(row.data) as TaskRecord;
  if (row.lease_until === null) delete record.leaseUntil;
  else record.leaseUntil = row.lease_until;
  return record;
}
