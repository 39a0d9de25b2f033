import type pg from 'pg';

import type { BrowseFilter, ListPosition, TaskBrowseStore, TaskRecord, TaskStatus } from '../../engine/index.js';
import type { PgNames } from './pgNames.js';
import { createUnderLock } from './pgSchemaLock.js';

const BROWSE_LOCK = '7265139183920410394';

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
      BROWSE_LOCK,
      `CREATE INDEX IF NOT EXISTS ${n.index('created')} ON ${n.tasks} (created_at DESC, task_id DESC);
       CREATE INDEX IF NOT EXISTS ${n.index('status_created')} ON ${n.tasks} (status, created_at DESC, task_id DESC);`,
    ).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  async page(
    filter: BrowseFilter,
    options: { after?: ListPosition; limit: number; now: number },
  ): Promise<TaskRecord[]> {
    const values: unknown[] = [options.now];
    const where = ['(expires_at IS NULL OR expires_at > $1)'];
    const add = (clause: (p: string) => string, ...params: unknown[]) => {
      const refs = params.map((value) => `$${values.push(value)}`);
      where.push(clause(refs.join(',')));
      return refs;
    };
    if (filter.status !== undefined) add((p) => `status = ${p}`, filter.status);
    if (filter.owner !== undefined) add((p) => `owner = ${p}`, filter.owner);
    if (filter.createdFrom !== undefined) add((p) => `created_at >= ${p}`, filter.createdFrom);
    if (filter.createdTo !== undefined) add((p) => `created_at < ${p}`, filter.createdTo);
    if (options.after) add((p) => `(created_at, task_id) < (${p})`, options.after.createdAt, options.after.taskId);
    values.push(options.limit);
    const result = await this.pool.query<{ data: TaskRecord; lease_until: number | null }>(
      `SELECT data, lease_until::float8 AS lease_until FROM ${this.names.tasks} WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, task_id DESC LIMIT $${values.length}`,
      values,
    );
    return result.rows.map((row) => {
      const record = row.data;
      if (row.lease_until === null) delete record.leaseUntil;
      else record.leaseUntil = row.lease_until;
      return record;
    });
  }

  async counts(): Promise<Partial<Record<TaskStatus, number>>> {
    const result = await this.pool.query<{ status: TaskStatus; n: number }>(
      `SELECT status, count(*)::float8 AS n FROM ${this.names.tasks} GROUP BY status`,
    );
    return Object.fromEntries(result.rows.map((row) => [row.status, row.n]));
  }
}
