import type Database from 'better-sqlite3';

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
import type { GroupCommit } from './GroupCommit.js';
import { PreparedTables } from './PreparedTables.js';

/** The subscriptions and the outbox, created when missing beside the task table (which they never change). */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS mcp_tasks_webhook_subscriptions (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    scope TEXT,
    expires_at INTEGER,
    record TEXT NOT NULL,
    status TEXT NOT NULL,
    watermark_seq INTEGER,
    watermark_cursor TEXT,
    ending_seq INTEGER
  );
  CREATE INDEX IF NOT EXISTS mcp_tasks_webhook_subscriptions_owner ON mcp_tasks_webhook_subscriptions (owner);
  CREATE INDEX IF NOT EXISTS mcp_tasks_webhook_subscriptions_name ON mcp_tasks_webhook_subscriptions (name, scope);
  CREATE INDEX IF NOT EXISTS mcp_tasks_webhook_subscriptions_expiry ON mcp_tasks_webhook_subscriptions (expires_at)
    WHERE expires_at IS NOT NULL;
  CREATE TABLE IF NOT EXISTS mcp_tasks_webhook_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    subscription_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    cursor TEXT,
    due_at INTEGER NOT NULL,
    target TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status TEXT,
    token TEXT,
    done INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX IF NOT EXISTS mcp_tasks_webhook_outbox_sub ON mcp_tasks_webhook_outbox (subscription_id, seq);
  CREATE INDEX IF NOT EXISTS mcp_tasks_webhook_outbox_due ON mcp_tasks_webhook_outbox (due_at) WHERE done = 0;
`;

interface SubRow {
  record: string;
  status: string;
  watermark_seq: number | null;
  watermark_cursor: string | null;
  ending_seq: number | null;
}

interface Row {
  seq: number;
  subscription_id: string;
  webhook_id: string;
  kind: OutboxRow['kind'];
  body: string;
  cursor: string | null;
  due_at: number;
  target: string | null;
  attempts: number;
  last_status: string | null;
  token: string | null;
  done: number;
}

const subscriptionOf = (row: SubRow): StoredWebhookSubscription => ({
  record: JSON.parse(row.record) as WebhookSubscriptionRecord,
  status: JSON.parse(row.status) as WebhookSubscriptionStatus,
  watermark: row.watermark_seq === null ? null : { seq: row.watermark_seq, cursor: row.watermark_cursor },
  ending: row.ending_seq,
});

const outboxRowOf = (row: Row): OutboxRow => ({
  subscriptionId: row.subscription_id,
  webhookId: row.webhook_id,
  kind: row.kind,
  body: row.body,
  cursor: row.cursor,
  dueAt: row.due_at,
  ...(row.target !== null && { target: JSON.parse(row.target) as OutboxRow['target'] }),
  seq: row.seq,
  attempts: row.attempts,
  lastStatus: row.last_status,
  token: row.token,
  done: row.done === 1,
});

/**
 * Webhook subscriptions and their outbox in the store's SQLite file. Every write is one SQLite transaction (through
 * the store's group commit), so a claim is atomic across the processes sharing the file.
 */
export class SqliteWebhookOutbox implements WebhookOutboxStore {
  private readonly tables: PreparedTables<ReturnType<typeof prepare>>;

  constructor(
    database: () => Database.Database | undefined,
    private readonly commits: GroupCommit,
  ) {
    this.tables = new PreparedTables('SqliteWebhookOutbox', database, SCHEMA, prepare);
  }

  async init(): Promise<void> {
    this.tables.open();
  }

  async saveSubscription(
    record: WebhookSubscriptionRecord,
    status: WebhookSubscriptionStatus | undefined,
    maxPerOwner: number,
  ): Promise<'created' | 'updated' | 'limit'> {
    const s = this.stmts();
    return this.commits.run(() => {
      const values = [record.owner, record.name, record.scope, record.expiresAt, JSON.stringify(record)] as const;
      if (s.exists.get(record.id) !== undefined) {
        s.updateRecord.run(...values, record.id);
        if (status) s.setStatus.run(JSON.stringify(status), record.id);
        return 'updated';
      }
      if ((s.countOwner.get(record.owner) as number) >= maxPerOwner) return 'limit';
      s.insert.run(record.id, ...values, JSON.stringify(status ?? initialWebhookStatus(record.createdAt)));
      return 'created';
    });
  }

  async getSubscription(id: string): Promise<StoredWebhookSubscription | undefined> {
    const row = this.stmts().get.get(id) as SubRow | undefined;
    return row && subscriptionOf(row);
  }

  async subscriptionsOf(owner: string): Promise<StoredWebhookSubscription[]> {
    return (this.stmts().ofOwner.all(owner) as SubRow[]).map(subscriptionOf);
  }

  async subscriptionsNamed(name: string, scope?: string): Promise<StoredWebhookSubscription[]> {
    const s = this.stmts();
    const rows = scope === undefined ? s.named.all(name) : s.namedScoped.all(name, name, scope);
    return (rows as SubRow[]).map(subscriptionOf);
  }

  async setStatus(id: string, status: WebhookSubscriptionStatus): Promise<void> {
    const s = this.stmts();
    await this.commits.run(() => s.setStatus.run(JSON.stringify(status), id));
  }

  async advanceWatermark(id: string, seq: number, cursor: string | null): Promise<void> {
    const s = this.stmts();
    await this.commits.run(() => s.advance.run(seq, cursor, id, seq));
  }

  async deleteSubscription(id: string): Promise<boolean> {
    const s = this.stmts();
    return this.commits.run(() => {
      if (s.deleteSub.run(id).changes === 0) return false;
      s.deleteSubRows.run(id);
      return true;
    });
  }

  async endSubscription(entry: OutboxEntry): Promise<number | undefined> {
    const s = this.stmts();
    return this.commits.run(() => {
      const ending = s.ending.get(entry.subscriptionId) as { ending_seq: number | null } | undefined;
      if (!ending) return undefined;
      if (ending.ending_seq !== null) return ending.ending_seq;
      const seq = this.insert({ ...entry, kind: 'terminated' });
      s.setEnding.run(seq, entry.subscriptionId);
      return seq;
    });
  }

  async enqueue(entry: OutboxEntry, maxQueued: number): Promise<number | undefined> {
    const s = this.stmts();
    return this.commits.run(() => {
      if (entry.kind !== 'terminated' && s.isEnding.get(entry.subscriptionId) !== undefined) return undefined;
      if (entry.kind === 'gap') {
        const waiting = s.waitingGap.get(entry.subscriptionId) as number | undefined;
        if (waiting !== undefined) {
          s.setCursor.run(entry.cursor, waiting);
          return waiting;
        }
      } else if (entry.kind === 'event' && (s.countWaiting.get(entry.subscriptionId) as number) >= maxQueued)
        return undefined;
      return this.insert(entry);
    });
  }

  async claim(token: string, now: number, leaseMs: number, limit: number): Promise<OutboxRow[]> {
    if (limit <= 0) return [];
    const s = this.stmts();
    return this.commits.run(() => {
      const seqs = s.due.all(now, limit) as number[];
      for (const seq of seqs) s.take.run(token, now + leaseMs, seq);
      const rows = seqs.map((seq) => outboxRowOf(s.row.get(seq) as Row));
      // spec TS8: everything before it is done: the ending subscription goes, its `terminated` row stays to be sent.
      for (const row of rows)
        if (row.kind === 'terminated' && s.deleteEnded.run(row.subscriptionId, row.seq).changes === 1)
          s.deleteSubRows.run(row.subscriptionId);
      return rows;
    });
  }

  async settle(seq: number, token: string, settlement: OutboxSettlement): Promise<boolean> {
    const s = this.stmts();
    return this.commits.run(() => {
      const result = settlement.done
        ? s.settleDone.run(settlement.lastStatus, seq, token)
        : s.settleRetry.run(settlement.lastStatus, settlement.dueAt, seq, token);
      return result.changes === 1;
    });
  }

  async rowsOf(subscriptionId: string): Promise<OutboxRow[]> {
    return (this.stmts().rowsOf.all(subscriptionId) as Row[]).map(outboxRowOf);
  }

  async deleteRows(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    const s = this.stmts();
    await this.commits.run(() => {
      for (const seq of seqs) s.deleteRow.run(seq);
    });
  }

  async expired(now: number, limit: number): Promise<string[]> {
    return this.stmts().expired.all(now, limit) as string[];
  }

  /** Inserts a row (inside a commit). */
  private insert(entry: OutboxEntry): number {
    const target = entry.target === undefined ? null : JSON.stringify(entry.target);
    const { lastInsertRowid } = this.stmts().enqueue.run(
      entry.subscriptionId,
      entry.webhookId,
      entry.kind,
      entry.body,
      entry.cursor,
      entry.dueAt,
      target,
    );
    return Number(lastInsertRowid);
  }

  private stmts(): ReturnType<typeof prepare> {
    return this.tables.get();
  }
}

function prepare(db: Database.Database) {
  const subs = 'mcp_tasks_webhook_subscriptions';
  const outbox = 'mcp_tasks_webhook_outbox';
  const subColumns = 'record, status, watermark_seq, watermark_cursor, ending_seq';
  // A file made before subscriptions could be ending gains the column.
  const columns = db.prepare(`SELECT name FROM pragma_table_info('${subs}')`).pluck().all() as string[];
  if (!columns.includes('ending_seq')) db.exec(`ALTER TABLE ${subs} ADD COLUMN ending_seq INTEGER`);
  return {
    exists: db.prepare(`SELECT 1 FROM ${subs} WHERE id = ?`).pluck(),
    countOwner: db.prepare(`SELECT count(*) FROM ${subs} WHERE owner = ?`).pluck(),
    insert: db.prepare(
      `INSERT INTO ${subs} (id, owner, name, scope, expires_at, record, status) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    updateRecord: db.prepare(
      `UPDATE ${subs} SET owner = ?, name = ?, scope = ?, expires_at = ?, record = ? WHERE id = ?`,
    ),
    setStatus: db.prepare(`UPDATE ${subs} SET status = ? WHERE id = ?`),
    advance: db.prepare(
      `UPDATE ${subs} SET watermark_seq = ?, watermark_cursor = ? WHERE id = ? AND (watermark_seq IS NULL OR watermark_seq < ?)`,
    ),
    get: db.prepare(`SELECT ${subColumns} FROM ${subs} WHERE id = ?`),
    ofOwner: db.prepare(`SELECT ${subColumns} FROM ${subs} WHERE owner = ? ORDER BY id`),
    named: db.prepare(`SELECT ${subColumns} FROM ${subs} WHERE name = ? ORDER BY id`),
    namedScoped: db.prepare(
      `SELECT ${subColumns} FROM ${subs} WHERE name = ? AND scope IS NULL
       UNION ALL SELECT ${subColumns} FROM ${subs} WHERE name = ? AND scope = ?`,
    ),
    deleteSub: db.prepare(`DELETE FROM ${subs} WHERE id = ?`),
    ending: db.prepare(`SELECT ending_seq FROM ${subs} WHERE id = ?`),
    isEnding: db.prepare(`SELECT 1 FROM ${subs} WHERE id = ? AND ending_seq IS NOT NULL`).pluck(),
    setEnding: db.prepare(`UPDATE ${subs} SET ending_seq = ? WHERE id = ?`),
    deleteEnded: db.prepare(`DELETE FROM ${subs} WHERE id = ? AND ending_seq = ?`),
    deleteSubRows: db.prepare(`DELETE FROM ${outbox} WHERE subscription_id = ? AND kind <> 'terminated'`),
    waitingGap: db
      .prepare(
        `SELECT seq FROM ${outbox} WHERE subscription_id = ? AND kind = 'gap' AND done = 0 AND token IS NULL LIMIT 1`,
      )
      .pluck(),
    setCursor: db.prepare(`UPDATE ${outbox} SET cursor = ? WHERE seq = ?`),
    countWaiting: db
      .prepare(`SELECT count(*) FROM ${outbox} WHERE subscription_id = ? AND kind = 'event' AND done = 0`)
      .pluck(),
    enqueue: db.prepare(
      `INSERT INTO ${outbox} (subscription_id, webhook_id, kind, body, cursor, due_at, target) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    // A `terminated` row waits for every row before it in its subscription (spec TS8, TS9).
    due: db
      .prepare(
        `SELECT seq FROM ${outbox} o WHERE done = 0 AND due_at <= ? AND (kind <> 'terminated' OR NOT EXISTS (
           SELECT 1 FROM ${outbox} b WHERE b.subscription_id = o.subscription_id AND b.seq < o.seq AND b.done = 0))
         ORDER BY due_at, seq LIMIT ?`,
      )
      .pluck(),
    take: db.prepare(`UPDATE ${outbox} SET token = ?, due_at = ?, attempts = attempts + 1 WHERE seq = ?`),
    row: db.prepare(`SELECT * FROM ${outbox} WHERE seq = ?`),
    settleDone: db.prepare(
      `UPDATE ${outbox} SET done = 1, token = NULL, last_status = ? WHERE seq = ? AND token = ? AND done = 0`,
    ),
    settleRetry: db.prepare(
      `UPDATE ${outbox} SET token = NULL, last_status = ?, due_at = ? WHERE seq = ? AND token = ? AND done = 0`,
    ),
    rowsOf: db.prepare(`SELECT * FROM ${outbox} WHERE subscription_id = ? ORDER BY seq`),
    deleteRow: db.prepare(`DELETE FROM ${outbox} WHERE seq = ?`),
    expired: db
      .prepare(`SELECT id FROM ${subs} WHERE expires_at IS NOT NULL AND expires_at < ? ORDER BY expires_at LIMIT ?`)
      .pluck(),
  };
}
