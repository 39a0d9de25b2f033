import type pg from 'pg';

import { encodeTaskEvent } from '../../engine/index.js';
import type { PgNames } from './pgNames.js';
import {
  ALONG_TYPES,
  COLUMNS,
  COLUMN_TYPES,
  columns,
  REPLACEMENT_TYPES,
  replacement,
  SET_FROM_V,
  type CappedInsert,
  type InsertOutcome,
  type Replacement,
} from './pgTaskRows.js';
import { UNIQUE_VIOLATION } from './PgTimeline.js';

export type PgQuery = <R extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
  values: unknown[],
) => Promise<pg.QueryResult<R>>;

/**
 * The PostgreSQL store's writes of task rows: creations under the owners' caps and compare-and-sets, alone or many in
 * one statement (PostgresStore batches them), with the timeline entries and the change event they carry.
 */
export class PgTaskWrites {
  constructor(
    private readonly query: PgQuery,
    private readonly names: PgNames,
    private readonly timelineTable: string,
    private readonly channel: string,
  ) {}

  /** One creation: the function takes the owner's lock, checks both caps and inserts (see migrations.ts). */
  async insertOne(item: CappedInsert): Promise<InsertOutcome> {
    // The timeline goes in the same statement, as in a batch.
    if (item.timeline) return (await this.insertMany([item]))[0] as InsertOutcome;
    const { record, limits } = item;
    const capped =
      limits.maxActive !== undefined || limits.maxStored !== undefined || limits.maxStoredBytes !== undefined;
    if (!capped) {
      const inserted = await this.query(
        `INSERT INTO ${this.names.tasks} (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
        columns(record),
      );
      return inserted.rowCount === 1 ? 'ok' : 'conflict';
    }
    const { rows } = await this.query<{ outcome: InsertOutcome }>(
      `SELECT ${this.names.qualified('insert_bounded')}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) AS outcome`,
      [...columns(record), limits.maxActive ?? null, limits.maxStored ?? null, limits.maxStoredBytes ?? null],
    );
    return rows[0]?.outcome ?? 'conflict';
  }

  /**
   * Creations in one statement (one transaction): each row through the same function as alone, in owner order, so
   * batches of several processes take the owners' locks in one order and never deadlock on them. A later row of an
   * owner counts the earlier ones of the same statement. Each stored task's first timeline entries are appended in
   * the same statement (as replaceAlong's: numbered after any rows its id already has, the bound applied).
   */
  async insertMany(items: CappedInsert[]): Promise<InsertOutcome[]> {
    const arrays = COLUMN_TYPES.map(() => [] as unknown[]);
    const extra: unknown[][] = [[], [], [], [], [], []];
    items.forEach(({ record, limits, timeline }, i) => {
      columns(record).forEach((value, c) => arrays[c]?.push(value));
      extra[0]?.push(limits.maxActive ?? null);
      extra[1]?.push(limits.maxStored ?? null);
      extra[2]?.push(i);
      extra[3]?.push(timeline ? JSON.stringify(timeline.entries) : null);
      extra[4]?.push(timeline ? Math.max(1, timeline.maxEntries - 1) : null);
      extra[5]?.push(limits.maxStoredBytes ?? null);
    });
    const types = [...COLUMN_TYPES, 'bigint', 'bigint', 'int', 'json', 'bigint', 'bigint'];
    const params = types.map((type, i) => `$${i + 1}::${type}[]`).join(', ');
    const capped = `${this.names.qualified('insert_bounded')}(v.task_id, v.owner, v.status, v.created_at, v.expires_at,
                  v.idempotency_key, v.runner, v.lease_until, v.version, v.data, v.max_active, v.max_stored, v.max_bytes)`;
    const ordered = `(SELECT * FROM unnest(${params}) AS u(${COLUMNS}, max_active, max_stored, ord, entries, keep, max_bytes)
               ORDER BY owner, ord) v`;
    const tl = this.timelineTable;
    const text = !items.some((item) => item.timeline)
      ? `SELECT v.ord, ${capped} AS outcome FROM ${ordered}`
      : // Referenced twice, r is evaluated once, in owner order (the function takes each owner's lock).
        `WITH r AS (SELECT v.ord, v.task_id, v.entries, v.keep, ${capped} AS outcome FROM ${ordered}),
       base AS (
         SELECT r.task_id, r.entries, r.keep, json_array_length(r.entries) AS n,
                coalesce((SELECT max(seq) FROM ${tl} x WHERE x.task_id = r.task_id), 0) AS s
         FROM r WHERE r.outcome = 'ok' AND r.entries IS NOT NULL),
       ins AS (
         INSERT INTO ${tl} (task_id, seq, data)
         SELECT base.task_id, base.s + e.ord, e.value
         FROM base, json_array_elements(base.entries) WITH ORDINALITY AS e(value, ord)
         WHERE base.s + e.ord = 1 OR e.ord > base.n - base.keep
         -- Rows left by an earlier task of the same id never cost the creation.
         ON CONFLICT DO NOTHING)
       SELECT ord, outcome FROM r`;
    const { rows } = await this.query<{ ord: number; outcome: InsertOutcome }>(text, [...arrays, ...extra]);
    const outcomes: InsertOutcome[] = [];
    for (const row of rows) outcomes[row.ord] = row.outcome;
    return items.map((_, i) => outcomes[i] ?? 'conflict');
  }

  async replaceOne({ next, expectedVersion, along }: Replacement): Promise<boolean> {
    if (along) {
      // Two appends to one timeline at once can collide on its numbering; the whole statement (write included) is
      // rolled back then, so it runs again on the rows the other committed.
      for (let attempt = 0; ; attempt++) {
        try {
          return (await this.replaceAlong([{ next, expectedVersion, along }]))[0] === true;
        } catch (error) {
          if (attempt >= 10 || (error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
        }
      }
    }
    const result = await this.query(
      // A lease renewed since the writer read the task is kept when the runner stays the same.
      `UPDATE ${this.names.tasks} SET status = $3, expires_at = $4, runner = $5,
         lease_until = CASE WHEN runner IS NOT DISTINCT FROM $5::text AND $6::bigint IS NOT NULL AND lease_until > $6::bigint
                            THEN lease_until ELSE $6::bigint END,
         version = $7, data = $8
       WHERE task_id = $1 AND version = $2`,
      replacement({ next, expectedVersion }),
    );
    return result.rowCount === 1;
  }

  /** Compare-and-sets of distinct tasks in one statement, each row with the same condition as alone. */
  async replaceMany(items: Replacement[]): Promise<boolean[]> {
    if (items.some((item) => item.along)) return this.replaceAlong(items);
    const arrays = REPLACEMENT_TYPES.map(() => [] as unknown[]);
    // In task order: batches of several processes lock shared rows in one order.
    const sorted = [...items].sort((a, b) => (a.next.taskId < b.next.taskId ? -1 : 1));
    for (const item of sorted) replacement(item).forEach((value, c) => arrays[c]?.push(value));
    const params = REPLACEMENT_TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(', ');
    const { rows } = await this.query<{ task_id: string }>(
      `UPDATE ${this.names.tasks} AS t SET ${SET_FROM_V}
       FROM unnest(${params}) AS v(task_id, expected, status, expires_at, runner, lease_until, version, data)
       WHERE t.task_id = v.task_id AND t.version = v.expected
       RETURNING t.task_id`,
      arrays,
    );
    const replaced = new Set(rows.map((row) => row.task_id));
    return items.map((item) => replaced.has(item.next.taskId));
  }

  /**
   * Compare-and-sets (as replaceMany) that also append their timeline entries (as PgTimeline.append: numbered after
   * the task's last entry, the middle kept to the bound) and NOTIFY their change, all in one statement: one
   * round trip, and the event is sent at the commit that made the write. A row whose version differs gets none.
   */
  async replaceAlong(items: Replacement[]): Promise<boolean[]> {
    const arrays = [...REPLACEMENT_TYPES, ...ALONG_TYPES].map(() => [] as unknown[]);
    const sorted = [...items].sort((a, b) => (a.next.taskId < b.next.taskId ? -1 : 1));
    for (const item of sorted) {
      const { along } = item;
      const timeline = along?.timeline;
      [
        ...replacement(item),
        along ? encodeTaskEvent(item.next.taskId, along.change) : null,
        timeline ? JSON.stringify(timeline.entries) : null,
        timeline ? Math.max(1, timeline.maxEntries - 1) : null,
      ].forEach((value, c) => arrays[c]?.push(value));
    }
    const params = [...REPLACEMENT_TYPES, ...ALONG_TYPES].map((type, i) => `$${i + 1}::${type}[]`).join(', ');
    const tl = this.timelineTable;
    const { rows } = await this.query<{ task_id: string }>(
      `WITH v AS (
         SELECT * FROM unnest(${params})
           AS v(task_id, expected, status, expires_at, runner, lease_until, version, data, event, entries, keep)),
       upd AS (
         UPDATE ${this.names.tasks} AS t SET ${SET_FROM_V}
         FROM v WHERE t.task_id = v.task_id AND t.version = v.expected
         RETURNING t.task_id, v.event, v.entries, v.keep),
       base AS (
         SELECT upd.task_id, upd.entries, upd.keep, json_array_length(upd.entries) AS n,
                coalesce((SELECT max(seq) FROM ${tl} x WHERE x.task_id = upd.task_id), 0) AS s
         FROM upd WHERE upd.entries IS NOT NULL),
       ins AS (
         INSERT INTO ${tl} (task_id, seq, data)
         SELECT base.task_id, base.s + e.ord, e.value
         FROM base, json_array_elements(base.entries) WITH ORDINALITY AS e(value, ord)
         WHERE base.s + e.ord = 1 OR e.ord > base.n - base.keep),
       trimmed AS (
         DELETE FROM ${tl} d USING base b
         WHERE d.task_id = b.task_id AND d.seq <= b.s + b.n - b.keep
           AND d.seq > (SELECT min(seq) FROM ${tl} m WHERE m.task_id = b.task_id)),
       notified AS (SELECT pg_notify($${arrays.length + 1}, upd.event) FROM upd WHERE upd.event IS NOT NULL)
       SELECT task_id FROM upd WHERE (SELECT count(*) FROM notified) >= 0`,
      [...arrays, this.channel],
    );
    const replaced = new Set(rows.map((row) => row.task_id));
    return items.map((item) => replaced.has(item.next.taskId));
  }
}
