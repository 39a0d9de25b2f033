import type pg from 'pg';

import type { BrowseFilter, ListPosition, TaskBrowseStore, TaskRecord, TaskStatus } from '../../engine/index.js';
import type { PgNames } from './pgNames.js';
import { createUnderLock } from './pgSchemaLock.js';

/** Operators' reads across owners: each a range of one index (created when missing), newest first. */
export class PgBrowse implements TaskBrowseStore {
  private ready: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly names: PgNames,
  ) {}

  init(): Promise<void> {
    const n = this.names;
    this.ready ??= createUnderLock(
      this.pool,
      this.names.qualified('ddl'),
      `CREATE INDEX IF NOT EXISTS ${n.index('created')} ON ${n.tasks} (created_at DESC, task_id DESC);
       CREATE INDEX IF NOT EXISTS ${n.index('status_created')} ON ${n.tasks} (status, created_at DESC, task_id DESC);`,
    ).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  readonly indexedFilters = ['tool', 'dialect'] as const;

  async page(
    filter: BrowseFilter,
    options: { after?: ListPosition; limit: number; now: number },
  ): Promise<TaskRecord[]> {
    const { where, values } = range(filter, options);
    values.push(options.limit);
    const result = await this.pool.query<Row>(
      `SELECT data, lease_until::float8 AS lease_until FROM ${this.names.tasks} WHERE ${where}
       ORDER BY created_at DESC, task_id DESC LIMIT $${values.length}`,
      values,
    );
    return result.rows.map(recordOf);
  }

  async searchText(
    filter: BrowseFilter,
    text: string,
    options: { after?: ListPosition; limit: number; budget: number; now: number },
  ): Promise<{ records: TaskRecord[]; scanned: number; next?: ListPosition }> {
    const { where, values } = range(filter, options);
    const [budget, needle, limit] = [values.push(options.budget), values.push(text), values.push(options.limit)];
    // The budget's rows in page order, the text looked for in SQL (json keeps the text JSON.stringify stored); the
    // last row of the budget and the count come with it, so the page needs one round trip.
    const result = await this.pool.query<Row & { created_at: number; task_id: string; hit: boolean; n: number }>(
      `WITH scanned AS MATERIALIZED (
         SELECT task_id, created_at, idempotency_key, data, lease_until FROM ${this.names.tasks}
         WHERE ${where} ORDER BY created_at DESC, task_id DESC LIMIT $${budget}
       ), hits AS (
         SELECT *, true AS hit FROM scanned
         WHERE position($${needle} in lower(task_id)) > 0 OR position($${needle} in lower(coalesce(idempotency_key, ''))) > 0
            OR position($${needle} in lower(coalesce((data->'request'->'params'->'arguments')::text, 'null'))) > 0
         ORDER BY created_at DESC, task_id DESC LIMIT $${limit}
       ), tail AS (
         SELECT * FROM scanned ORDER BY created_at ASC, task_id ASC LIMIT 1
       )
       SELECT data, lease_until::float8 AS lease_until, created_at::float8 AS created_at, task_id, hit, (SELECT count(*)::float8 FROM scanned) AS n
       FROM (SELECT * FROM hits UNION ALL SELECT *, false FROM tail) AS rows
       ORDER BY hit DESC, created_at DESC, task_id DESC`,
      values,
    );
    const hits = result.rows.filter((row) => row.hit);
    const tail = result.rows.find((row) => !row.hit);
    const scanned = result.rows[0]?.n ?? 0;
    const records = hits.map(recordOf);
    const last = hits.at(-1);
    if (last && hits.length >= options.limit) {
      return { records, scanned, next: { createdAt: last.created_at, taskId: last.task_id } };
    }
    if (!tail || scanned < options.budget) return { records, scanned };
    return { records, scanned, next: { createdAt: tail.created_at, taskId: tail.task_id } };
  }

  async counts(): Promise<Partial<Record<TaskStatus, number>>> {
    const result = await this.pool.query<{ status: TaskStatus; n: number }>(
      `SELECT status, count(*)::float8 AS n FROM ${this.names.tasks} GROUP BY status`,
    );
    return Object.fromEntries(result.rows.map((row) => [row.status, row.n]));
  }
}

type Row = { data: TaskRecord; lease_until: number | null };

function recordOf(row: Row): TaskRecord {
  const record = row.data;
  if (row.lease_until === null) delete record.leaseUntil;
  else record.leaseUntil = row.lease_until;
  return record;
}

/** The WHERE clause of a browse range and its values ($1 is `now`). */
function range(filter: BrowseFilter, options: { after?: ListPosition; now: number }) {
  const values: unknown[] = [options.now];
  const where = ['(expires_at IS NULL OR expires_at > $1)'];
  const add = (clause: (p: string) => string, ...params: unknown[]) => {
    const refs = params.map((value) => `$${values.push(value)}`);
    where.push(clause(refs.join(',')));
  };
  if (filter.status !== undefined) add((p) => `status = ${p}`, filter.status);
  if (filter.owner !== undefined) add((p) => `owner = ${p}`, filter.owner);
  if (filter.tool !== undefined) add((p) => `tool = ${p}`, filter.tool);
  if (filter.dialect !== undefined) add((p) => `dialect = ${p}`, filter.dialect);
  if (filter.createdFrom !== undefined) add((p) => `created_at >= ${p}`, filter.createdFrom);
  if (filter.createdTo !== undefined) add((p) => `created_at < ${p}`, filter.createdTo);
  if (options.after) add((p) => `(created_at, task_id) < (${p})`, options.after.createdAt, options.after.taskId);
  return { where: where.join(' AND '), values };
}
