import type pg from 'pg';

import type { StepJournalStore, StepRow, WakeEntry } from '../../engine/index.js';
import { quoteIdent } from './pgNames.js';
import { createUnderLock, ddlMarks } from './pgSchemaLock.js';

/**
 * The step journal in PostgreSQL, in tables of its own beside the task table (created when missing): one row per
 * step, one per task with its fence (the latest attempt to claim it) and durable timer. A step write takes a share
 * lock on the fence row in the same statement, so it is ordered against a newer attempt's claim.
 */
export class PgStepJournalStore implements StepJournalStore {
  private readonly steps: string;
  private readonly fences: string;
  private readonly wakeIndex: string;
  private ready: Promise<void> | undefined;
  private readonly marks: string;

  constructor(
    private readonly pool: pg.Pool,
    schema: string,
    tablePrefix: string,
  ) {
    this.marks = ddlMarks(schema, tablePrefix);
    const s = quoteIdent(schema);
    this.steps = `${s}.${quoteIdent(`${tablePrefix}_steps`)}`;
    this.fences = `${s}.${quoteIdent(`${tablePrefix}_fences`)}`;
    this.wakeIndex = quoteIdent(`${tablePrefix}_fences_wake`);
  }

  init(): Promise<void> {
    this.ready ??= this.createTables().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  async fence(taskId: string, attempt: number): Promise<boolean> {
    const result = await this.pool.query(
      `INSERT INTO ${this.fences} AS f (task_id, attempt) VALUES ($1, $2)
       ON CONFLICT (task_id) DO UPDATE SET attempt = EXCLUDED.attempt WHERE f.attempt <= EXCLUDED.attempt`,
      [taskId, attempt],
    );
    return result.rowCount === 1;
  }

  async read(taskId: string): Promise<StepRow[]> {
    const result = await this.pool.query<{ data: StepRow }>(`SELECT data FROM ${this.steps} WHERE task_id = $1`, [
      taskId,
    ]);
    return result.rows.map((row) => row.data);
  }

  async write(taskId: string, attempt: number, row: StepRow): Promise<boolean> {
    const result = await this.pool.query(
      `INSERT INTO ${this.steps} (task_id, name, data)
       SELECT $1, $2, $3::json WHERE EXISTS (
         SELECT 1 FROM ${this.fences} WHERE task_id = $1 AND attempt = $4 FOR SHARE)
       ON CONFLICT (task_id, name) DO UPDATE SET data = EXCLUDED.data`,
      [taskId, row.name, JSON.stringify(row), attempt],
    );
    return result.rowCount === 1;
  }

  async remove(taskId: string): Promise<void> {
    await this.pool.query(
      `WITH gone AS (DELETE FROM ${this.steps} WHERE task_id = $1) DELETE FROM ${this.fences} WHERE task_id = $1`,
      [taskId],
    );
  }

  async setWake(taskId: string, wakeAt: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.fences} (task_id, attempt, wake_at) VALUES ($1, 0, $2)
       ON CONFLICT (task_id) DO UPDATE SET wake_at = EXCLUDED.wake_at`,
      [taskId, wakeAt],
    );
  }

  async clearWake(taskId: string, wakeAt: number): Promise<void> {
    await this.pool.query(`UPDATE ${this.fences} SET wake_at = NULL WHERE task_id = $1 AND wake_at = $2`, [
      taskId,
      wakeAt,
    ]);
  }

  async due(until: number, limit: number): Promise<WakeEntry[]> {
    const result = await this.pool.query<{ task_id: string; wake_at: string }>(
      `SELECT task_id, wake_at FROM ${this.fences} WHERE wake_at IS NOT NULL AND wake_at <= $1
       ORDER BY wake_at LIMIT $2`,
      [until, limit],
    );
    return result.rows.map((row) => ({ taskId: row.task_id, wakeAt: Number(row.wake_at) }));
  }

  private createTables(): Promise<void> {
    return createUnderLock(
      this.pool,
      this.marks,
      `CREATE TABLE IF NOT EXISTS ${this.steps} (
         task_id TEXT COLLATE "C" NOT NULL,
         name TEXT COLLATE "C" NOT NULL,
         data JSON NOT NULL,
         PRIMARY KEY (task_id, name)
       );
       CREATE TABLE IF NOT EXISTS ${this.fences} (
         task_id TEXT COLLATE "C" PRIMARY KEY,
         attempt BIGINT NOT NULL,
         wake_at BIGINT
       );
       CREATE INDEX IF NOT EXISTS ${this.wakeIndex} ON ${this.fences} (wake_at) WHERE wake_at IS NOT NULL;`,
    );
  }
}
