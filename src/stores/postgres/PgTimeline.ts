import type pg from 'pg';

import type { TaskTimelineStore, TimelineEntry } from '../../engine/index.js';
import { PgStatements } from './PgStatements.js';
import { quoteIdent } from './pgNames.js';
import { createUnderLock, ddlMarks } from './pgSchemaLock.js';

/** SQLSTATE of a unique violation: two appends to one timeline numbered the same entries. */
export const UNIQUE_VIOLATION = '23505';

/** Each task's timeline in a PostgreSQL table of its own (created when missing): one row per entry, numbered per task. */
export class PgTimeline implements TaskTimelineStore {
  /** The table, schema-qualified and quoted (the Postgres store appends to it within its compare-and-set). */
  readonly table: string;
  private ready: Promise<void> | undefined;
  private readonly marks: string;

  constructor(
    private readonly pool: pg.Pool,
    schema: string,
    tablePrefix: string,
    private readonly statements = new PgStatements(false),
  ) {
    this.marks = ddlMarks(schema, tablePrefix);
    this.table = `${quoteIdent(schema)}.${quoteIdent(`${tablePrefix}_timeline`)}`;
  }

  init(): Promise<void> {
    this.ready ??= createUnderLock(
      this.pool,
      this.marks,
      `CREATE TABLE IF NOT EXISTS ${this.table} (
         task_id TEXT COLLATE "C" NOT NULL,
         seq BIGINT NOT NULL,
         data JSON NOT NULL,
         PRIMARY KEY (task_id, seq)
       )`,
    ).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  async append(taskId: string, entries: TimelineEntry[], maxEntries: number): Promise<void> {
    // One statement numbers the entries after the task's last, leaves out those the bound would drop at once, and
    // trims the middle past the bound (a statement's DELETE sees only the rows from before it); two writers
    // appending at once collide on the key and the loser numbers again.
    const text = `
      WITH base AS (
        SELECT coalesce(max(seq), 0) AS s, json_array_length($2::json) AS n FROM ${this.table} WHERE task_id = $1),
      ins AS (
        INSERT INTO ${this.table} (task_id, seq, data)
        SELECT $1, base.s + e.ord, e.value FROM base, json_array_elements($2::json) WITH ORDINALITY AS e(value, ord)
        WHERE base.s + e.ord = 1 OR e.ord > base.n - $3)
      DELETE FROM ${this.table} d USING base WHERE d.task_id = $1
        AND d.seq <= base.s + base.n - $3
        AND d.seq > (SELECT min(seq) FROM ${this.table} WHERE task_id = $1)`;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.pool.query(
          this.statements.config(text, [taskId, JSON.stringify(entries), Math.max(1, maxEntries - 1)]),
        );
        return;
      } catch (error) {
        if (attempt >= 10 || (error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      }
    }
  }

  async read(taskId: string): Promise<TimelineEntry[]> {
    const result = await this.pool.query<{ data: TimelineEntry }>(
      `SELECT data FROM ${this.table} WHERE task_id = $1 ORDER BY seq`,
      [taskId],
    );
    return result.rows.map((row) => row.data);
  }

  async remove(taskId: string): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE task_id = $1`, [taskId]);
  }
}
