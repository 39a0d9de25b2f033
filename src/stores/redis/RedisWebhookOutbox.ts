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

/*
 * Keys under the store's prefix P:
 *   P wh:s:<id>     hash: record, status (JSON), owner, name, ws/wc (watermark seq and cursor)
 *   P wh:o:<owner>  set of the owner's subscription ids;  P wh:n:<name>  set of a type's subscription ids
 *   P wh:ns:<len>:<name>:<scope>  those of them with that scope;  P wh:nu:<name>  those without one
 *   P wh:exp        zset of subscriptions with an expiry, by expiresAt
 *   P wh:seq        the row counter
 *   P wh:r:<seq>    hash: s (subscription), e (the entry's fixed part, JSON), k (kind), c (cursor), d (dueAt),
 *                   a (attempts), l (lastStatus), t (token), x ('1' when done); an absent field is null
 *   P wh:rs:<sub>   zset of the subscription's rows by seq;  P wh:ev:<sub>  its event rows not yet done
 *   P wh:gap:<sub>  the seq of its waiting (unclaimed) gap row
 *   P wh:due        zset of rows not done, by dueAt; members are zero-padded seqs, so ties go by seq
 * Every write is one script: atomic across the instances sharing the server.
 */

const KEYS_OF = `
local P = ARGV[1]
local function sub(id) return P .. 'wh:s:' .. id end
local function row(seq) return P .. 'wh:r:' .. seq end
local function member(seq) return string.format('%016d', tonumber(seq)) end
local function scoped(name, scope)
  if scope == '' then return P .. 'wh:nu:' .. name end
  return P .. 'wh:ns:' .. string.len(name) .. ':' .. name .. ':' .. scope
end
`;

/**
 * ARGV: P, id, owner, name, expiresAt ('' none), record, status ('' keep), maxPerOwner, initial status, scope ('' none;
 * a scope is a task id, never empty).
 */
const SAVE = `${KEYS_OF}
local id, owner, name, expires = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local key = sub(id)
local created = redis.call('EXISTS', key) == 0
if created then
  if redis.call('SCARD', P .. 'wh:o:' .. owner) >= tonumber(ARGV[8]) then return 'limit' end
  redis.call('HSET', key, 'status', ARGV[9])
else
  redis.call('SREM', P .. 'wh:o:' .. redis.call('HGET', key, 'owner'), id)
  redis.call('SREM', P .. 'wh:n:' .. redis.call('HGET', key, 'name'), id)
  redis.call('SREM', scoped(redis.call('HGET', key, 'name'), redis.call('HGET', key, 'scope') or ''), id)
end
redis.call('HSET', key, 'record', ARGV[6], 'owner', owner, 'name', name, 'scope', ARGV[10])
if ARGV[7] ~= '' then redis.call('HSET', key, 'status', ARGV[7]) end
redis.call('SADD', P .. 'wh:o:' .. owner, id)
redis.call('SADD', P .. 'wh:n:' .. name, id)
redis.call('SADD', scoped(name, ARGV[10]), id)
if expires == '' then redis.call('ZREM', P .. 'wh:exp', id) else redis.call('ZADD', P .. 'wh:exp', expires, id) end
if created then return 'created' end
return 'updated'`;

/** ARGV: P, id, status. */
const SET_STATUS = `${KEYS_OF}
if redis.call('EXISTS', sub(ARGV[2])) == 1 then redis.call('HSET', sub(ARGV[2]), 'status', ARGV[3]) end
return 0`;

/** ARGV: P, id, seq, cursor, has cursor ('1'). */
const ADVANCE = `${KEYS_OF}
local key = sub(ARGV[2])
if redis.call('EXISTS', key) == 0 then return 0 end
local at = redis.call('HGET', key, 'ws')
if at and tonumber(at) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', key, 'ws', ARGV[3])
if ARGV[5] == '1' then redis.call('HSET', key, 'wc', ARGV[4]) else redis.call('HDEL', key, 'wc') end
return 1`;

/** ARGV: P, id. */
const DELETE_SUB = `${KEYS_OF}
local id = ARGV[2]
local key = sub(id)
if redis.call('EXISTS', key) == 0 then return 0 end
redis.call('SREM', P .. 'wh:o:' .. redis.call('HGET', key, 'owner'), id)
redis.call('SREM', P .. 'wh:n:' .. redis.call('HGET', key, 'name'), id)
redis.call('SREM', scoped(redis.call('HGET', key, 'name'), redis.call('HGET', key, 'scope') or ''), id)
redis.call('ZREM', P .. 'wh:exp', id)
redis.call('DEL', key, P .. 'wh:ev:' .. id, P .. 'wh:gap:' .. id)
for _, seq in ipairs(redis.call('ZRANGE', P .. 'wh:rs:' .. id, 0, -1)) do
  if redis.call('HGET', row(seq), 'k') ~= 'terminated' then
    redis.call('DEL', row(seq))
    redis.call('ZREM', P .. 'wh:rs:' .. id, seq)
    redis.call('ZREM', P .. 'wh:due', member(seq))
  end
end
return 1`;

/** ARGV: P, subscription, kind, entry, cursor, has cursor ('1'), dueAt, maxQueued. Replies the seq, or -1 when full. */
const ENQUEUE = `${KEYS_OF}
local id, kind = ARGV[2], ARGV[3]
if kind == 'gap' then
  local waiting = redis.call('GET', P .. 'wh:gap:' .. id)
  if waiting then
    if ARGV[6] == '1' then redis.call('HSET', row(waiting), 'c', ARGV[5]) else redis.call('HDEL', row(waiting), 'c') end
    return tonumber(waiting)
  end
elseif kind == 'event' then
  if redis.call('ZCARD', P .. 'wh:ev:' .. id) >= tonumber(ARGV[8]) then return -1 end
end
local seq = redis.call('INCR', P .. 'wh:seq')
redis.call('HSET', row(seq), 's', id, 'e', ARGV[4], 'k', kind, 'd', ARGV[7], 'a', 0)
if ARGV[6] == '1' then redis.call('HSET', row(seq), 'c', ARGV[5]) end
redis.call('ZADD', P .. 'wh:rs:' .. id, seq, seq)
redis.call('ZADD', P .. 'wh:due', ARGV[7], member(seq))
if kind == 'event' then redis.call('ZADD', P .. 'wh:ev:' .. id, seq, seq) end
if kind == 'gap' then redis.call('SET', P .. 'wh:gap:' .. id, seq) end
return seq`;

/** ARGV: P, token, now, lease end, limit. Replies the claimed seqs. */
const CLAIM = `${KEYS_OF}
local due = redis.call('ZRANGEBYSCORE', P .. 'wh:due', '-inf', ARGV[3], 'LIMIT', 0, tonumber(ARGV[5]))
local seqs = {}
for _, m in ipairs(due) do
  local seq = tostring(tonumber(m))
  local key = row(seq)
  redis.call('HSET', key, 't', ARGV[2], 'd', ARGV[4])
  redis.call('HINCRBY', key, 'a', 1)
  redis.call('ZADD', P .. 'wh:due', ARGV[4], m)
  local id = redis.call('HGET', key, 's')
  if redis.call('GET', P .. 'wh:gap:' .. id) == seq then redis.call('DEL', P .. 'wh:gap:' .. id) end
  seqs[#seqs + 1] = tonumber(seq)
end
return seqs`;

/** ARGV: P, seq, token, done ('1'), lastStatus, dueAt. */
const SETTLE = `${KEYS_OF}
local key = row(ARGV[2])
if redis.call('HGET', key, 't') ~= ARGV[3] or redis.call('HGET', key, 'x') == '1' then return 0 end
redis.call('HDEL', key, 't')
redis.call('HSET', key, 'l', ARGV[5])
if ARGV[4] == '1' then
  redis.call('HSET', key, 'x', '1')
  redis.call('ZREM', P .. 'wh:due', member(ARGV[2]))
  redis.call('ZREM', P .. 'wh:ev:' .. redis.call('HGET', key, 's'), ARGV[2])
else
  redis.call('HSET', key, 'd', ARGV[6])
  redis.call('ZADD', P .. 'wh:due', ARGV[6], member(ARGV[2]))
end
return 1`;

/** ARGV: P, seq... */
const DELETE_ROWS = `${KEYS_OF}
for i = 2, #ARGV do
  local seq = ARGV[i]
  local id = redis.call('HGET', row(seq), 's')
  if id then
    redis.call('ZREM', P .. 'wh:rs:' .. id, seq)
    redis.call('ZREM', P .. 'wh:ev:' .. id, seq)
    if redis.call('GET', P .. 'wh:gap:' .. id) == seq then redis.call('DEL', P .. 'wh:gap:' .. id) end
  end
  redis.call('ZREM', P .. 'wh:due', member(seq))
  redis.call('DEL', row(seq))
end
return 0`;

const SCRIPTS = {
  mcpTasksWebhookSave: SAVE,
  mcpTasksWebhookSetStatus: SET_STATUS,
  mcpTasksWebhookAdvance: ADVANCE,
  mcpTasksWebhookDeleteSub: DELETE_SUB,
  mcpTasksWebhookEnqueue: ENQUEUE,
  mcpTasksWebhookClaim: CLAIM,
  mcpTasksWebhookSettle: SETTLE,
  mcpTasksWebhookDeleteRows: DELETE_ROWS,
};

type Scripted = { [K in keyof typeof SCRIPTS]: (...args: Array<string | number>) => Promise<unknown> };

type EntryPart = Pick<OutboxEntry, 'subscriptionId' | 'webhookId' | 'kind' | 'body' | 'target'>;

/** Webhook subscriptions and their outbox in Redis, under the store's prefix. */
export class RedisWebhookOutbox implements WebhookOutboxStore {
  private readonly scripts: Scripted;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    for (const [name, lua] of Object.entries(SCRIPTS)) redis.defineCommand(name, { numberOfKeys: 0, lua });
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
    for (const id of ids) pipeline.hmget(`${this.prefix}wh:s:${id}`, 'record', 'status', 'ws', 'wc');
    const replies = (await pipeline.exec()) ?? [];
    const found: StoredWebhookSubscription[] = [];
    for (const [error, value] of replies) {
      if (error) throw error;
      const [record, status, ws, wc] = value as Array<string | null>;
      if (record == null || status == null) continue; // removed meanwhile
      found.push({
        record: JSON.parse(record) as WebhookSubscriptionRecord,
        status: JSON.parse(status) as WebhookSubscriptionStatus,
        watermark: ws == null ? null : { seq: Number(ws), cursor: wc ?? null },
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
