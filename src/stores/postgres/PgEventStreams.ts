import { randomBytes } from 'node:crypto';

import type pg from 'pg';

import type { EventStreamLog, NewStreamedEvent, StreamedEvent } from '../../engine/index.js';
import { quoteIdent } from './pgNames.js';
import { createUnderLock, ddlMarks } from './pgSchemaLock.js';

/**
 * The untasked event types' bounded logs in two PostgreSQL tables of their own (created when missing): one row per
 * stream, one per kept entry.
 *
 * An append is one statement: the stream row's upsert numbers it (it locks the row, so appenders of every process
 * wait for one another and take seqs in commit order), inserts the entry and deletes those beyond `keep`. A statement
 * sees only rows committed before it began, so that delete misses the entries of appenders it waited for; the row's
 * `kept_from` (the lowest seq still kept) therefore bounds reads too, and the next append deletes what was missed.
 */
export class PgEventStreams implements EventStreamLog {
  private readonly streams: string;
  private readonly entries: string;
  private ready: Promise<void> | undefined;
  private readonly marks: string;

  constructor(
    private readonly pool: pg.Pool,
    schema: string,
    tablePrefix: string,
  ) {
    this.marks = ddlMarks(schema, tablePrefix);
    this.streams = `${quoteIdent(schema)}.${quoteIdent(`${tablePrefix}_event_streams`)}`;
    this.entries = `${quoteIdent(schema)}.${quoteIdent(`${tablePrefix}_stream_events`)}`;
  }

  init(): Promise<void> {
    this.ready ??= createUnderLock(
      this.pool,
      this.marks,
      `CREATE TABLE IF NOT EXISTS ${this.streams} (
         stream TEXT COLLATE "C" PRIMARY KEY,
         epoch TEXT NOT NULL,
         next_seq BIGINT NOT NULL,
         kept_from BIGINT NOT NULL
       );
       CREATE TABLE IF NOT EXISTS ${this.entries} (
         stream TEXT COLLATE "C" NOT NULL,
         seq BIGINT NOT NULL,
         at BIGINT NOT NULL,
         owner TEXT,
         data JSON NOT NULL,
         PRIMARY KEY (stream, seq)
       )`,
    ).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  async epoch(stream: string): Promise<string> {
    const { rows } = await this.pool.query<{ epoch: string }>(`SELECT epoch FROM ${this.streams} WHERE stream = $1`, [
      stream,
    ]);
    if (rows[0]) return rows[0].epoch;
    // A new stream: the no-op update answers the row another process created meanwhile (it waits for its commit).
    const made = await this.pool.query<{ epoch: string }>(
      `INSERT INTO ${this.streams} AS s (stream, epoch, next_seq, kept_from) VALUES ($1, $2, 0, 0)
       ON CONFLICT (stream) DO UPDATE SET epoch = s.epoch
       RETURNING epoch`,
      [stream, newEpoch()],
    );
    return (made.rows[0] as { epoch: string }).epoch;
  }

  async append(stream: string, event: NewStreamedEvent, keep: number): Promise<number> {
    const { rows } = await this.pool.query<{ seq: string }>(
      `WITH bump AS (
         INSERT INTO ${this.streams} AS s (stream, epoch, next_seq, kept_from) VALUES ($1, $2, 1, 0)
         ON CONFLICT (stream) DO UPDATE
           SET next_seq = s.next_seq + 1, kept_from = greatest(s.kept_from, s.next_seq + 1 - $3::bigint)
         RETURNING next_seq - 1 AS seq, kept_from),
       ins AS (
         INSERT INTO ${this.entries} (stream, seq, at, owner, data)
         SELECT $1, bump.seq, $4, $5, $6::json FROM bump),
       trim AS (DELETE FROM ${this.entries} WHERE stream = $1 AND seq < (SELECT kept_from FROM bump))
       SELECT seq FROM bump`,
      [stream, newEpoch(), Math.max(1, keep), event.at, event.owner, JSON.stringify(event.data)],
    );
    return Number((rows[0] as { seq: string }).seq);
  }

  async read(stream: string, from: number, limit: number): Promise<StreamedEvent[]> {
    if (limit <= 0) return [];
    const { rows } = await this.pool.query<{
      seq: string;
      at: string;
      owner: string | null;
      data: Record<string, unknown>;
    }>(
      `SELECT e.seq, e.at, e.owner, e.data FROM ${this.entries} e JOIN ${this.streams} s ON s.stream = e.stream
       WHERE e.stream = $1 AND e.seq >= greatest($2::bigint, s.kept_from) ORDER BY e.seq LIMIT $3`,
      [stream, Math.max(0, from), limit],
    );
    return rows.map((row) => ({ seq: Number(row.seq), at: Number(row.at), owner: row.owner, data: row.data }));
  }

  async head(stream: string): Promise<number> {
    const { rows } = await this.pool.query<{ next_seq: string }>(
      `SELECT next_seq FROM ${this.streams} WHERE stream = $1`,
      [stream],
    );
    return Number(rows[0]?.next_seq ?? 0);
  }
}

function newEpoch(): string {
  return randomBytes(6).toString('base64url');
}
