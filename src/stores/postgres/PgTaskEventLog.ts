import type pg from 'pg';

import type { EventAppendResult, LoggedEvent, NewLoggedEvent, TaskEventLog } from '../../engine/index.js';
import { quoteIdent } from './pgNames.js';
import { createUnderLock, ddlMarks } from './pgSchemaLock.js';
import { UNIQUE_VIOLATION } from './PgTimeline.js';

/** Each task's event log in a PostgreSQL table of its own (created when missing): one row per entry, numbered per task. */
export class PgTaskEventLog implements TaskEventLog {
  readonly table: string;
  private readonly keyIndex: string;
  private ready: Promise<void> | undefined;
  private readonly marks: string;

  constructor(
    private readonly pool: pg.Pool,
    schema: string,
    tablePrefix: string,
  ) {
    this.marks = ddlMarks(schema, tablePrefix);
    this.table = `${quoteIdent(schema)}.${quoteIdent(`${tablePrefix}_event_log`)}`;
    this.keyIndex = quoteIdent(`${tablePrefix}_event_log_key`);
  }

  init(): Promise<void> {
    this.ready ??= createUnderLock(
      this.pool,
      this.marks,
      `CREATE TABLE IF NOT EXISTS ${this.table} (
         task_id TEXT COLLATE "C" NOT NULL,
         seq BIGINT NOT NULL,
         key TEXT COLLATE "C",
         type TEXT NOT NULL,
         at BIGINT NOT NULL,
         data JSON NOT NULL,
         PRIMARY KEY (task_id, seq)
       );
       CREATE UNIQUE INDEX IF NOT EXISTS ${this.keyIndex} ON ${this.table} (task_id, key) WHERE key IS NOT NULL`,
    ).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  async append(taskId: string, event: NewLoggedEvent, maxEvents: number): Promise<EventAppendResult> {
    // One statement: the entry keyed the same, else the next number under the bound. Two appenders at once collide on
    // the primary key (or the key index) and the loser tries again, seeing the winner's row.
    const text = `
      WITH known AS (SELECT seq FROM ${this.table} WHERE task_id = $1 AND key = $2),
      base AS (SELECT coalesce(max(seq) + 1, 0) AS n FROM ${this.table} WHERE task_id = $1),
      ins AS (
        INSERT INTO ${this.table} (task_id, seq, key, type, at, data)
        SELECT $1, base.n, $2, $3, $4, $5::json FROM base
        WHERE NOT EXISTS (SELECT 1 FROM known) AND base.n < $6
        RETURNING seq)
      SELECT (SELECT seq FROM ins) AS appended, (SELECT seq FROM known) AS duplicate`;
    const values = [taskId, event.key ?? null, event.type, event.at, JSON.stringify(event.data), maxEvents];
    for (let attempt = 0; ; attempt++) {
      try {
        const { rows } = await this.pool.query<{ appended: string | null; duplicate: string | null }>(text, values);
        const row = rows[0];
        if (row?.appended != null) return { appended: true, seq: Number(row.appended) };
        if (row?.duplicate != null) return { appended: false, reason: 'duplicate', seq: Number(row.duplicate) };
        return { appended: false, reason: 'limit' };
      } catch (error) {
        if (attempt >= 20 || (error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
      }
    }
  }

  async read(taskId: string, from: number, limit: number): Promise<LoggedEvent[]> {
    const { rows } = await this.pool.query<{ seq: string; type: string; at: string; data: Record<string, unknown> }>(
      `SELECT seq, type, at, data FROM ${this.table} WHERE task_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
      [taskId, Math.max(0, from), limit],
    );
    return rows.map((row) => ({ seq: Number(row.seq), type: row.type, at: Number(row.at), data: row.data }));
  }

  async length(taskId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT coalesce(max(seq) + 1, 0) AS n FROM ${this.table} WHERE task_id = $1`,
      [taskId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async remove(taskId: string): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE task_id = $1`, [taskId]);
  }
}
