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

/** What is read back is always a fresh copy. */
const copy = <T>(value: T): T => structuredClone(value);

/** Webhook subscriptions and their delivery outbox in process memory. */
export class MemoryWebhookOutbox implements WebhookOutboxStore {
  private readonly subscriptions = new Map<string, StoredWebhookSubscription>();
  /** Rows by seq; a Map keeps insertion order, which is seq order. */
  private readonly rows = new Map<number, OutboxRow>();
  private nextSeq = 1;

  async init(): Promise<void> {}

  async saveSubscription(
    record: WebhookSubscriptionRecord,
    status: WebhookSubscriptionStatus | undefined,
    maxPerOwner: number,
  ): Promise<'created' | 'updated' | 'limit'> {
    const known = this.subscriptions.get(record.id);
    if (known) {
      known.record = copy(record);
      if (status) known.status = copy(status);
      return 'updated';
    }
    let owned = 0;
    for (const sub of this.subscriptions.values()) if (sub.record.owner === record.owner) owned++;
    if (owned >= maxPerOwner) return 'limit';
    this.subscriptions.set(record.id, {
      record: copy(record),
      status: copy(status ?? initialWebhookStatus(record.createdAt)),
      watermark: null,
      ending: null,
    });
    return 'created';
  }

  async getSubscription(id: string): Promise<StoredWebhookSubscription | undefined> {
    const sub = this.subscriptions.get(id);
    return sub && copy(sub);
  }

  async subscriptionsOf(owner: string): Promise<StoredWebhookSubscription[]> {
    return [...this.subscriptions.values()].filter((sub) => sub.record.owner === owner).map(copy);
  }

  async subscriptionsNamed(name: string, scope?: string): Promise<StoredWebhookSubscription[]> {
    return [...this.subscriptions.values()]
      .filter(
        (sub) =>
          sub.record.name === name && (scope === undefined || sub.record.scope === null || sub.record.scope === scope),
      )
      .map(copy);
  }

  async setStatus(id: string, status: WebhookSubscriptionStatus): Promise<void> {
    const sub = this.subscriptions.get(id);
    if (sub) sub.status = copy(status);
  }

  async advanceWatermark(id: string, seq: number, cursor: string | null): Promise<void> {
    const sub = this.subscriptions.get(id);
    if (sub && (sub.watermark === null || sub.watermark.seq < seq)) sub.watermark = { seq, cursor };
  }

  async deleteSubscription(id: string): Promise<boolean> {
    if (!this.subscriptions.delete(id)) return false;
    for (const [seq, row] of this.rows)
      if (row.subscriptionId === id && row.kind !== 'terminated') this.rows.delete(seq);
    return true;
  }

  async endSubscription(entry: OutboxEntry): Promise<number | undefined> {
    const sub = this.subscriptions.get(entry.subscriptionId);
    if (!sub) return undefined;
    sub.ending ??= this.add({ ...entry, kind: 'terminated' });
    return sub.ending;
  }

  async enqueue(entry: OutboxEntry, maxQueued: number): Promise<number | undefined> {
    if (entry.kind !== 'terminated' && (this.subscriptions.get(entry.subscriptionId)?.ending ?? null) !== null)
      return undefined;
    let waiting = 0;
    for (const row of this.rows.values()) {
      if (row.subscriptionId !== entry.subscriptionId || row.done) continue;
      if (entry.kind === 'gap' && row.kind === 'gap' && row.token === null) {
        row.cursor = entry.cursor;
        return row.seq;
      }
      if (row.kind === 'event') waiting++;
    }
    if (entry.kind === 'event' && waiting >= maxQueued) return undefined;
    return this.add(entry);
  }

  async claim(token: string, now: number, leaseMs: number, limit: number): Promise<OutboxRow[]> {
    const due = [...this.rows.values()].filter((row) => !row.done && row.dueAt <= now && !this.blocked(row));
    due.sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
    const claimed: OutboxRow[] = [];
    for (const row of due.slice(0, limit)) {
      row.token = token;
      row.dueAt = now + leaseMs;
      row.attempts++;
      claimed.push(copy(row));
      // spec TS8: everything before it is done: the ending subscription goes, its `terminated` row stays to be sent.
      if (row.kind === 'terminated' && this.subscriptions.get(row.subscriptionId)?.ending === row.seq)
        await this.deleteSubscription(row.subscriptionId);
    }
    return claimed;
  }

  async settle(seq: number, token: string, settlement: OutboxSettlement): Promise<boolean> {
    const row = this.rows.get(seq);
    if (!row || row.done || row.token !== token) return false;
    row.token = null;
    row.lastStatus = settlement.lastStatus;
    if (settlement.done) row.done = true;
    else row.dueAt = settlement.dueAt;
    return true;
  }

  async rowsOf(subscriptionId: string): Promise<OutboxRow[]> {
    return [...this.rows.values()].filter((row) => row.subscriptionId === subscriptionId).map(copy);
  }

  async deleteRows(seqs: readonly number[]): Promise<void> {
    for (const seq of seqs) this.rows.delete(seq);
  }

  /** A `terminated` row waits while a row before it in its subscription is not done. */
  private blocked(row: OutboxRow): boolean {
    if (row.kind !== 'terminated') return false;
    for (const other of this.rows.values()) {
      if (other.seq >= row.seq) break;
      if (other.subscriptionId === row.subscriptionId && !other.done) return true;
    }
    return false;
  }

  private add(entry: OutboxEntry): number {
    const seq = this.nextSeq++;
    this.rows.set(seq, { ...copy(entry), seq, attempts: 0, lastStatus: null, token: null, done: false });
    return seq;
  }

  async expired(now: number, limit: number): Promise<string[]> {
    const ids: string[] = [];
    for (const sub of this.subscriptions.values()) {
      if (ids.length >= limit) break;
      if (sub.record.expiresAt !== null && sub.record.expiresAt < now) ids.push(sub.record.id);
    }
    return ids;
  }
}
