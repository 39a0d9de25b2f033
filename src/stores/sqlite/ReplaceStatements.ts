import type Database from 'better-sqlite3';

import type { TaskRecord } from '../../engine/index.js';

/** The indexed columns a write may change, each a bit of a statement's key. */
const COLUMNS = [
  { bit: 1, set: 'status = @status', changed: (a: TaskRecord, b: TaskRecord) => a.status !== b.status },
  { bit: 2, set: 'expires_at = @expires_at', changed: (a: TaskRecord, b: TaskRecord) => a.expiresAt !== b.expiresAt },
  { bit: 4, set: 'runner = @runner', changed: (a: TaskRecord, b: TaskRecord) => a.runner !== b.runner },
  {
    bit: 8,
    // A lease renewed since the writer read the task is kept when the runner stays the same.
    set: `lease_until = CASE WHEN runner IS @runner AND @lease_until IS NOT NULL AND lease_until > @lease_until
                             THEN lease_until ELSE @lease_until END`,
    // Unchanged runner and lease: the stored lease is the one read, or a later renewal of it, which the write keeps.
    changed: (a: TaskRecord, b: TaskRecord) => a.leaseUntil !== b.leaseUntil || a.runner !== b.runner,
  },
];
const ALL = COLUMNS.reduce((mask, column) => mask | column.bit, 0);

/**
 * The compare-and-set UPDATE of a task, in one variant per set of changed indexed columns, prepared on first use:
 * SQLite maintains every index over a column the statement sets, whether or not its value changed, so a write that
 * only moves the record on (a status message, progress, a claim) skips the status, expiry and owner indexes.
 */
export class ReplaceStatements {
  private readonly variants = new Map<number, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** The statement for `next` over `previous` (the record at the expected version); every column without it. */
  for(next: TaskRecord, previous: TaskRecord | undefined): Database.Statement {
    let mask = previous ? 0 : ALL;
    if (previous) for (const column of COLUMNS) if (column.changed(previous, next)) mask |= column.bit;
    let statement = this.variants.get(mask);
    if (!statement) {
      const sets = ['version = @version', 'data = @data', ...COLUMNS.filter((c) => mask & c.bit).map((c) => c.set)];
      statement = this.db.prepare(
        `UPDATE mcp_tasks SET ${sets.join(', ')} WHERE task_id = @task_id AND version = @expected`,
      );
      this.variants.set(mask, statement);
    }
    return statement;
  }
}
