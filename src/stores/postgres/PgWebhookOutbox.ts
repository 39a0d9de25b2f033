import type pg from 'pg';

import {
  initialWebhookStatus,
  type OutboxEntry,
  type OutboxRow,
  type OutboxSettlement,
  type StoredWebhookSubscription,
  type WebhookOutboxStore,
  type WebhookSubscriptionRecord,
  type WebhookSubscriptionStatus,
} from '../../engine/index.js';
import { quoteIdent } from './pgNames.js';
import { createUnderLock, ddlMarks } from './pgSchemaLock.js';

interface SubRow {
  record: WebhookSubscriptionRecord;
  status: WebhookSubscriptionStatus;
  watermark_seq: string | null;
  watermark_cursor: string | null;
  ending_seq: string | null;
}

interface Row {
  seq: string;
  subscription_id: string;
  webhook_id: string;
  kind: OutboxRow['kind'];
  body: string;
  cursor: string | null;
  due_at: string;
  target: OutboxRow['target'] | null;
  attempts: number;
  last_status: string | null;
  token: string | null;
  done: boolean;
}

const subscriptionOf = (row: SubRow): StoredWebhookSubscription => ({
  record: row.record,
  status: row.status,
  watermark: row.watermark_seq === null ? null : { seq: Number(row.watermark_seq), cursor: row.watermark_cursor },
  ending: row.ending_seq === null ? null : Number(row.ending_seq),
});

const outboxRowOf = (row: Row): OutboxRow => ({
  subscriptionId: row.subscription_id,
  webhookId: row.webhook_id,
  kind: row.kind,
  body: row.body,
  cursor: row.cursor,
  dueAt: Number(row.due_at),
  ...(row.target !== null && { target: row.target }),
  seq: Number(row.seq),
  attempts: row.attempts,
  lastStatus: row.last_status,
  token: row.token,
  done: row.done,
});

/**
 * Webhook subscriptions and their outbox in PostgreSQL tables of their own (created when missing). Claims skip rows
 * another instance holds locked (`FOR UPDATE SKIP LOCKED`), so instances sharing the database never take the same row;
 * the per-owner and per-subscription bounds are checked under a transaction-scoped advisory lock.
 */
export class PgWebhookOutbox implements WebhookOutboxStore {
  private readonly subs: string;
  private readonly outbox: string;
  private readonly prefix: string;
  private ready: Promise<void> | undefined;
  private readonly marks: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    tablePrefix: string,
  ) {
    this.marks = ddlMarks(schema, tablePrefix);
    this.prefix = tablePrefix;
    this.subs = `${quoteIdent(schema)}.${quoteIdent(`${tablePrefix}_webhook_subscriptions`)}`;
    this.outbox = `${quoteIdent(schema)}.${quoteIdent(`${tablePrefix}_webhook_outbox`)}`;
  }

  init(): Promise<void> {
    const index = (name: string) => quoteIdent(`${this.prefix}_webhook_${name}`);
    this.ready ??= createUnderLock(
      this.pool,
      this.marks,
      `CREATE TABLE IF NOT EXISTS ${this.subs} (
         id TEXT COLLATE "C" PRIMARY KEY,
         owner TEXT COLLATE "C" NOT NULL,
         name TEXT COLLATE "C" NOT NULL,
         scope TEXT COLLATE "C",
         expires_at BIGINT,
         record JSONB NOT NULL,
         status JSONB NOT NULL,
         watermark_seq BIGINT,
         watermark_cursor TEXT,
         ending_seq BIGINT
       );
       ALTER TABLE ${this.subs} ADD COLUMN IF NOT EXISTS ending_seq BIGINT;
       CREATE INDEX IF NOT EXISTS ${index('subscriptions_owner')} ON ${this.subs} (owner);
       CREATE INDEX IF NOT EXISTS ${index('subscriptions_name')} ON ${this.subs} (name, scope);
       CREATE INDEX IF NOT EXISTS ${index('subscriptions_expiry')} ON ${this.subs} (expires_at)
         WHERE expires_at IS NOT NULL;
       CREATE TABLE IF NOT EXISTS ${this.outbox} (
         seq BIGSERIAL PRIMARY KEY,
         subscription_id TEXT COLLATE "C" NOT NULL,
         webhook_id TEXT NOT NULL,
         kind TEXT NOT NULL,
         body TEXT NOT NULL,
         cursor TEXT,
         due_at BIGINT NOT NULL,
         target JSONB,
         attempts INTEGER NOT NULL DEFAULT 0,
         last_status TEXT,
         token TEXT,
         done BOOLEAN NOT NULL DEFAULT false
       );
       CREATE INDEX IF NOT EXISTS ${index('outbox_sub')} ON ${this.outbox} (subscription_id, seq);
       CREATE INDEX IF NOT EXISTS ${index('outbox_due')} ON ${this.outbox} (due_at) WHERE NOT done`,
    ).catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  async saveSubscription(
    record: WebhookSubscriptionRecord,
    status: WebhookSubscriptionStatus | undefined,
    maxPerOwner: number,
  ): Promise<'created' | 'updated' | 'limit'> {
    return this.transaction(`owner:${record.owner}`, async (client) => {
      const values = [record.id, record.owner, record.name, record.scope, record.expiresAt, JSON.stringify(record)];
      const updated = await client.query(
        `UPDATE ${this.subs} SET owner = $2, name = $3, scope = $4, expires_at = $5, record = $6::jsonb${status ? ', status = $7::jsonb' : ''}
         WHERE id = $1`,
        status ? [...values, JSON.stringify(status)] : values,
      );
      if (updated.rowCount === 1) return 'updated';
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.subs} WHERE owner = $1`, [
        record.owner,
      ]);
      if (Number(rows[0]?.n ?? 0) >= maxPerOwner) return 'limit';
      await client.query(
        `INSERT INTO ${this.subs} (id, owner, name, scope, expires_at, record, status)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb)`,
        [...values, JSON.stringify(status ?? initialWebhookStatus(record.createdAt))],
      );
      return 'created';
    });
  }

  async getSubscription(id: string): Promise<StoredWebhookSubscription | undefined> {
    const { rows } = await this.pool.query<SubRow>(`${this.selectSubs()} WHERE id = $1`, [id]);
    return rows[0] && subscriptionOf(rows[0]);
  }

  async subscriptionsOf(owner: string): Promise<StoredWebhookSubscription[]> {
    const { rows } = await this.pool.query<SubRow>(`${this.selectSubs()} WHERE owner = $1 ORDER BY id`, [owner]);
    return rows.map(subscriptionOf);
  }

  async subscriptionsNamed(name: string, scope?: string): Promise<StoredWebhookSubscription[]> {
    const { rows } =
      scope === undefined
        ? await this.pool.query<SubRow>(`${this.selectSubs()} WHERE name = $1 ORDER BY id`, [name])
        : await this.pool.query<SubRow>(
            `${this.selectSubs()} WHERE name = $1 AND scope IS NULL
             UNION ALL ${this.selectSubs()} WHERE name = $1 AND scope = $2`,
            [name, scope],
          );
    return rows.map(subscriptionOf);
  }

  async setStatus(id: string, status: WebhookSubscriptionStatus): Promise<void> {
    await this.pool.query(`UPDATE ${this.subs} SET status = $2::jsonb WHERE id = $1`, [id, JSON.stringify(status)]);
  }

  async advanceWatermark(id: string, seq: number, cursor: string | null): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.subs} SET watermark_seq = $2, watermark_cursor = $3
       WHERE id = $1 AND (watermark_seq IS NULL OR watermark_seq < $2)`,
      [id, seq, cursor],
    );
  }

  async deleteSubscription(id: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ deleted: boolean }>(
      `WITH sub AS (DELETE FROM ${this.subs} WHERE id = $1 RETURNING id),
       rows AS (DELETE FROM ${this.outbox} WHERE subscription_id IN (SELECT id FROM sub) AND kind <> 'terminated')
       SELECT EXISTS (SELECT 1 FROM sub) AS deleted`,
      [id],
    );
    return rows[0]?.deleted === true;
  }

  async endSubscription(entry: OutboxEntry): Promise<number | undefined> {
    return this.transaction(`sub:${entry.subscriptionId}`, async (client) => {
      const { rows } = await client.query<{ ending_seq: string | null }>(
        `SELECT ending_seq FROM ${this.subs} WHERE id = $1 FOR UPDATE`,
        [entry.subscriptionId],
      );
      const sub = rows[0];
      if (!sub) return undefined;
      if (sub.ending_seq !== null) return Number(sub.ending_seq);
      const seq = await this.insert(client, { ...entry, kind: 'terminated' });
      await client.query(`UPDATE ${this.subs} SET ending_seq = $2 WHERE id = $1`, [entry.subscriptionId, seq]);
      return seq;
    });
  }

  async enqueue(entry: OutboxEntry, maxQueued: number): Promise<number | undefined> {
    return this.transaction(`sub:${entry.subscriptionId}`, async (client) => {
      if (entry.kind !== 'terminated') {
        const { rows } = await client.query(`SELECT 1 FROM ${this.subs} WHERE id = $1 AND ending_seq IS NOT NULL`, [
          entry.subscriptionId,
        ]);
        if (rows.length > 0) return undefined;
      }
      if (entry.kind === 'gap') {
        const { rows } = await client.query<{ seq: string }>(
          `UPDATE ${this.outbox} SET cursor = $2 WHERE seq = (
             SELECT seq FROM ${this.outbox}
             WHERE subscription_id = $1 AND kind = 'gap' AND NOT done AND token IS NULL LIMIT 1)
           RETURNING seq`,
          [entry.subscriptionId, entry.cursor],
        );
        if (rows[0]) return Number(rows[0].seq);
      } else if (entry.kind === 'event') {
        const { rows } = await client.query<{ n: string }>(
          `SELECT count(*) AS n FROM ${this.outbox} WHERE subscription_id = $1 AND kind = 'event' AND NOT done`,
          [entry.subscriptionId],
        );
        if (Number(rows[0]?.n ?? 0) >= maxQueued) return undefined;
      }
      return this.insert(client, entry);
    });
  }

  async claim(token: string, now: number, leaseMs: number, limit: number): Promise<OutboxRow[]> {
    if (limit <= 0) return [];
    // A `terminated` row waits for every row before it in its subscription; claiming it removes the ending
    // subscription with its remaining (done) rows, in the same statement (spec TS8, TS9).
    const { rows } = await this.pool.query<Row>(
      `WITH claimed AS (
         UPDATE ${this.outbox} o SET token = $1, due_at = $3, attempts = o.attempts + 1
         FROM (SELECT seq FROM ${this.outbox} w
               WHERE NOT done AND due_at <= $2 AND (kind <> 'terminated' OR NOT EXISTS (
                 SELECT 1 FROM ${this.outbox} b WHERE b.subscription_id = w.subscription_id AND b.seq < w.seq AND NOT b.done))
               ORDER BY due_at, seq LIMIT $4
               FOR UPDATE SKIP LOCKED) due
         WHERE o.seq = due.seq
         RETURNING o.*),
       ended AS (
         DELETE FROM ${this.subs} s USING claimed c
         WHERE c.kind = 'terminated' AND s.id = c.subscription_id AND s.ending_seq = c.seq
         RETURNING s.id),
       dropped AS (
         DELETE FROM ${this.outbox} r USING ended e WHERE r.subscription_id = e.id AND r.kind <> 'terminated')
       SELECT * FROM claimed`,
      [token, now, now + leaseMs, limit],
    );
    return rows.map(outboxRowOf).sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
  }

  async settle(seq: number, token: string, settlement: OutboxSettlement): Promise<boolean> {
    const result = settlement.done
      ? await this.pool.query(
          `UPDATE ${this.outbox} SET done = true, token = NULL, last_status = $3
           WHERE seq = $1 AND token = $2 AND NOT done`,
          [seq, token, settlement.lastStatus],
        )
      : await this.pool.query(
          `UPDATE ${this.outbox} SET token = NULL, last_status = $3, due_at = $4
           WHERE seq = $1 AND token = $2 AND NOT done`,
          [seq, token, settlement.lastStatus, settlement.dueAt],
        );
    return result.rowCount === 1;
  }

  async rowsOf(subscriptionId: string): Promise<OutboxRow[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT * FROM ${this.outbox} WHERE subscription_id = $1 ORDER BY seq`,
      [subscriptionId],
    );
    return rows.map(outboxRowOf);
  }

  async deleteRows(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    await this.pool.query(`DELETE FROM ${this.outbox} WHERE seq = ANY($1::bigint[])`, [seqs]);
  }

  async expired(now: number, limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM ${this.subs} WHERE expires_at IS NOT NULL AND expires_at < $1 ORDER BY expires_at LIMIT $2`,
      [now, limit],
    );
    return rows.map((row) => row.id);
  }

  private selectSubs(): string {
    return `SELECT record, status, watermark_seq, watermark_cursor, ending_seq FROM ${this.subs}`;
  }

  private async insert(client: pg.PoolClient, entry: OutboxEntry): Promise<number> {
    const { rows } = await client.query<{ seq: string }>(
      `INSERT INTO ${this.outbox} (subscription_id, webhook_id, kind, body, cursor, due_at, target)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb) RETURNING seq`,
      [
        entry.subscriptionId,
        entry.webhookId,
        entry.kind,
        entry.body,
        entry.cursor,
        entry.dueAt,
        entry.target === undefined ? null : JSON.stringify(entry.target),
      ],
    );
    return Number(rows[0]?.seq);
  }

  /** Runs `work` in a transaction holding an advisory lock on `key` (within this store's schema). */
  private async transaction<T>(key: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${this.schema}.webhooks.${key}`]);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
