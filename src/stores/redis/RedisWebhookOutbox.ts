import type { Redis } from 'ioredis';

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
import { WEBHOOK_SCRIPTS } from './redisWebhookScripts.js';

type Scripted = { [K in keyof typeof WEBHOOK_SCRIPTS]: (...args: Array<string | number>) => Promise<unknown> };

type EntryPart = Pick<OutboxEntry, 'subscriptionId' | 'webhookId' | 'kind' | 'body' | 'target'>;

/** Webhook subscriptions and their outbox in Redis, under the store's prefix. */
export class RedisWebhookOutbox implements WebhookOutboxStore {
  private readonly scripts: Scripted;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    for (const [name, lua] of Object.entries(WEBHOOK_SCRIPTS)) redis.defineCommand(name, { numberOfKeys: 0, lua });
    this.scripts = redis as unknown as Scripted;
  }

  async init(): Promise<void> {}

  async saveSubscription(
    record: WebhookSubscriptionRecord,
    status: WebhookSubscriptionStatus | undefined,
    maxPerOwner: number,
  ): Promise<'created' | 'updated' | 'limit'> {
    return (await this.scripts.mcpTasksWebhookSave(
      this.prefix,
      record.id,
      record.owner,
      record.name,
      record.expiresAt === null ? '' : record.expiresAt,
      JSON.stringify(record),
      status ? JSON.stringify(status) : '',
      maxPerOwner,
      JSON.stringify(initialWebhookStatus(record.createdAt)),
      record.scope ?? '',
    )) as 'created' | 'updated' | 'limit';
  }

  async getSubscription(id: string): Promise<StoredWebhookSubscription | undefined> {
    return (await this.subscriptions([id]))[0];
  }

  async subscriptionsOf(owner: string): Promise<StoredWebhookSubscription[]> {
    return this.subscriptions((await this.redis.smembers(`${this.prefix}wh:o:${owner}`)).sort());
  }

  async subscriptionsNamed(name: string, scope?: string): Promise<StoredWebhookSubscription[]> {
    if (scope === undefined)
      return this.subscriptions((await this.redis.smembers(`${this.prefix}wh:n:${name}`)).sort());
    const ids = await this.redis.sunion(
      `${this.prefix}wh:nu:${name}`,
      `${this.prefix}wh:ns:${name.length}:${name}:${scope}`,
    );
    return this.subscriptions(ids.sort());
  }

  async setStatus(id: string, status: WebhookSubscriptionStatus): Promise<void> {
    await this.scripts.mcpTasksWebhookSetStatus(this.prefix, id, JSON.stringify(status));
  }

  async advanceWatermark(id: string, seq: number, cursor: string | null): Promise<void> {
    await this.scripts.mcpTasksWebhookAdvance(this.prefix, id, seq, cursor ?? '', cursor === null ? '0' : '1');
  }

  async deleteSubscription(id: string): Promise<boolean> {
    return (await this.scripts.mcpTasksWebhookDeleteSub(this.prefix, id)) === 1;
  }

  async endSubscription(entry: OutboxEntry): Promise<number | undefined> {
    const fixed: EntryPart = {
      subscriptionId: entry.subscriptionId,
      webhookId: entry.webhookId,
      kind: 'terminated',
      body: entry.body,
      ...(entry.target !== undefined && { target: entry.target }),
    };
    const seq = (await this.scripts.mcpTasksWebhookEnd(
      this.prefix,
      entry.subscriptionId,
      JSON.stringify(fixed),
      '',
      '0',
      entry.dueAt,
    )) as number;
    return seq < 0 ? undefined : seq;
  }

  async enqueue(entry: OutboxEntry, maxQueued: number): Promise<number | undefined> {
    const fixed: EntryPart = {
      subscriptionId: entry.subscriptionId,
      webhookId: entry.webhookId,
      kind: entry.kind,
      body: entry.body,
      ...(entry.target !== undefined && { target: entry.target }),
    };
    const seq = (await this.scripts.mcpTasksWebhookEnqueue(
      this.prefix,
      entry.subscriptionId,
      entry.kind,
      JSON.stringify(fixed),
      entry.cursor ?? '',
      entry.cursor === null ? '0' : '1',
      entry.dueAt,
      maxQueued,
    )) as number;
    return seq < 0 ? undefined : seq;
  }

  async claim(token: string, now: number, leaseMs: number, limit: number): Promise<OutboxRow[]> {
    if (limit <= 0) return [];
    const seqs = (await this.scripts.mcpTasksWebhookClaim(this.prefix, token, now, now + leaseMs, limit)) as number[];
    return this.rows(seqs);
  }

  async settle(seq: number, token: string, settlement: OutboxSettlement): Promise<boolean> {
    const settled = await this.scripts.mcpTasksWebhookSettle(
      this.prefix,
      seq,
      token,
      settlement.done ? '1' : '0',
      settlement.lastStatus,
      settlement.done ? 0 : settlement.dueAt,
    );
    return settled === 1;
  }

  async rowsOf(subscriptionId: string): Promise<OutboxRow[]> {
    const seqs = await this.redis.zrange(`${this.prefix}wh:rs:${subscriptionId}`, 0, -1);
    return this.rows(seqs.map(Number));
  }

  async deleteRows(seqs: readonly number[]): Promise<void> {
    if (seqs.length > 0) await this.scripts.mcpTasksWebhookDeleteRows(this.prefix, ...seqs);
  }

  async expired(now: number, limit: number): Promise<string[]> {
    return this.redis.zrangebyscore(`${this.prefix}wh:exp`, '-inf', `(${now}`, 'LIMIT', 0, limit);
  }

  private async subscriptions(ids: readonly string[]): Promise<StoredWebhookSubscription[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hmget(`${this.prefix}wh:s:${id}`, 'record', 'status', 'ws', 'wc', 'end');
    const replies = (await pipeline.exec()) ?? [];
    const found: StoredWebhookSubscription[] = [];
    for (const [error, value] of replies) {
      if (error) throw error;
      const [record, status, ws, wc, end] = value as Array<string | null>;
      if (record == null || status == null) continue; // removed meanwhile
      found.push({
        record: JSON.parse(record) as WebhookSubscriptionRecord,
        status: JSON.parse(status) as WebhookSubscriptionStatus,
        watermark: ws == null ? null : { seq: Number(ws), cursor: wc ?? null },
        ending: end == null ? null : Number(end),
      });
    }
    return found;
  }

  private async rows(seqs: readonly number[]): Promise<OutboxRow[]> {
    if (seqs.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const seq of seqs) pipeline.hgetall(`${this.prefix}wh:r:${seq}`);
    const replies = (await pipeline.exec()) ?? [];
    const rows: OutboxRow[] = [];
    replies.forEach(([error, value], index) => {
      if (error) throw error;
      const hash = value as Record<string, string>;
      if (hash['e'] === undefined) return;
      const fixed = JSON.parse(hash['e']) as EntryPart;
      rows.push({
        ...fixed,
        cursor: hash['c'] ?? null,
        dueAt: Number(hash['d']),
        seq: seqs[index] as number,
        attempts: Number(hash['a'] ?? 0),
        lastStatus: hash['l'] ?? null,
        token: hash['t'] ?? null,
        done: hash['x'] === '1',
      });
    });
    return rows.sort((a, b) => a.seq - b.seq);
  }
}
