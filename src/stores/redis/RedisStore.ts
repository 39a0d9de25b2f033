import { randomBytes } from 'node:crypto';

import { Redis } from 'ioredis';

import {
  encodeTaskEvent,
  type EngineLogger,
  type EventStreamLog,
  type InsertAlong,
  type InsertResult,
  isTerminal,
  type ListPosition,
  type OwnerLimits,
  reconnectDelayMs,
  redactUrl,
  type ReplaceAlong,
  type StepJournalStore,
  STORE_WAIT_MS,
  StoreUnavailableError,
  type TaskBrowseStore,
  type TaskEventLog,
  type TaskRecord,
  type TaskStore,
  type TaskTimelineStore,
  type WebhookOutboxStore,
} from '../../engine/index.js';
import { closeConnection, RedisEventBus } from './RedisEventBus.js';
import { RedisStepJournalStore } from './RedisStepJournalStore.js';
import { listMember, redisKeys, type RedisKeys } from './redisKeys.js';
import { RedisBrowse } from './RedisBrowse.js';
import {
  BROWSE,
  DELETE,
  EVICT_FETCHED,
  FIND_STALE,
  GET_BY_KEY,
  INSERT,
  MARK_FETCHED,
  RENEW,
  REPLACE,
  REPLACE_ALONG,
  SWEEP,
} from './redisScripts.js';
import { RedisTimeline, timelineArgs } from './RedisTimeline.js';
import { RedisEventStreams } from './RedisEventStreams.js';
import { RedisTaskEventLog } from './RedisTaskEventLog.js';
import { RedisWebhookOutbox } from './RedisWebhookOutbox.js';
import { waitForReady } from './waitForReady.js';

export interface RedisStoreOptions {
  /** Connection URL (`redis://host:port/db`) for the store's own client. Required unless `redis` is given. */
  url?: string;
  /** An existing client to share (without its own `keyPrefix`); `close()` leaves it open. */
  redis?: Redis;
  /** Prefix of every key and of the events channel. Default 'mcp-tasks:'. */
  keyPrefix?: string;
  /**
   * Redis drops a record on its own this long after it should have expired, in case no sweeper runs any more
   * (the sweep stays the primary mechanism and also clears the indexes afterwards). Default 1 hour.
   */
  nativeExpiryGraceMs?: number;
  /** How long a command of the store's own client waits for a connection before it is refused unsent. Default 5 s. */
  connectWaitMs?: number;
  logger?: Pick<EngineLogger, 'warn'>;
}

const SCRIPTS = {
  mcpTasksInsert: INSERT,
  mcpTasksReplace: REPLACE,
  mcpTasksReplaceAlong: REPLACE_ALONG,
  mcpTasksDelete: DELETE,
  mcpTasksGetByKey: GET_BY_KEY,
  mcpTasksList: BROWSE,
  mcpTasksSweep: SWEEP,
  mcpTasksFindStale: FIND_STALE,
  mcpTasksRenew: RENEW,
  mcpTasksMarkFetched: MARK_FETCHED,
  mcpTasksEvictFetched: EVICT_FETCHED,
} as const;

type ScriptName = keyof typeof SCRIPTS;
/** Every script takes exactly one key, then its arguments. */
type Scripted = Record<ScriptName, (key: string, ...args: Array<string | number>) => Promise<unknown>>;
type Reply = string | null;

/**
 * Tasks in Redis: one hash per task plus indexes (per-owner list zset, per-owner active set, idempotency keys,
 * expiry and lease zsets, per-runner sets), all changed together by Lua scripts. Durability follows the server's
 * persistence settings (`appendonly yes`; `appendfsync always` for no loss on power failure).
 */
export class RedisStore implements TaskStore {
  readonly kind = 'redis';
  readonly insertsAlong = true;
  readonly replacesAlong = true;
  readonly events: RedisEventBus;
  readonly journal: StepJournalStore;
  readonly timeline: TaskTimelineStore;
  readonly eventLog: TaskEventLog;
  readonly eventStreams: EventStreamLog;
  readonly webhooks: WebhookOutboxStore;
  readonly browse: TaskBrowseStore;
  /** The timeline's keys, written along with a task's row by the scripts. */
  private readonly timelineKeys: RedisTimeline;
  private readonly redis: Redis;
  private readonly ownClient: boolean;
  private readonly keys: RedisKeys;
  private readonly graceMs: number;
  private initialising: Promise<void> | undefined;
  private secret: Uint8Array | undefined;
  private closed = false;
  private readonly description: string;
  /** The socket's own error: a failed connect() only says "Connection is closed." */
  private connectionError: Error | undefined;

  constructor(options: RedisStoreOptions) {
    if (!options.redis && !options.url) throw new Error('RedisStore needs a url or a redis client');
    this.description = `the Redis store ${options.url ? redactUrl(options.url) : '(a shared client)'}`;
    // Scripts build some key names themselves; a client-side prefix would apply to the others only.
    if (options.redis?.options.keyPrefix) throw new Error('RedisStore: use keyPrefix, not a client with a keyPrefix');
    this.keys = redisKeys(options.keyPrefix ?? 'mcp-tasks:');
    this.graceMs = options.nativeExpiryGraceMs ?? 60 * 60 * 1000;
    this.ownClient = !options.redis;
    this.redis =
      options.redis ??
      new Redis(options.url as string, {
        lazyConnect: true,
        // One behaviour for short outages of every store (STORE_WAIT_MS): a command waits for the connection only
        // before it is sent, and one in flight when it drops fails rather than being sent again on reconnect.
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        retryStrategy: reconnectDelayMs,
      });
    if (this.ownClient) {
      waitForReady(this.redis, options.connectWaitMs ?? STORE_WAIT_MS);
      this.redis.on('error', (error: Error) => {
        this.connectionError = error;
        options.logger?.warn({ error: String(error) }, 'redis connection');
      });
      this.redis.on('ready', () => (this.connectionError = undefined));
    }
    for (const [name, lua] of Object.entries(SCRIPTS)) this.redis.defineCommand(name, { numberOfKeys: 1, lua });
    this.journal = new RedisStepJournalStore(this.redis, this.keys.prefix);
    this.timelineKeys = new RedisTimeline(this.redis, this.keys.prefix);
    this.timeline = this.timelineKeys;
    this.eventLog = new RedisTaskEventLog(this.redis, this.keys.prefix);
    this.eventStreams = new RedisEventStreams(this.redis, this.keys.prefix);
    this.webhooks = new RedisWebhookOutbox(this.redis, this.keys.prefix);
    this.browse = new RedisBrowse(this.redis, this.keys, decode);
    const subscriber = this.redis.duplicate({
      lazyConnect: true,
      // Subscriptions are re-made on reconnect; their commands may wait for it.
      enableOfflineQueue: true,
      // A recognisable name in CLIENT LIST; unique per bus so one can be told apart from another.
      connectionName: `${this.keys.prefix.replace(/[^\w:.-]/g, '_')}events-${randomBytes(4).toString('hex')}`,
    });
    this.events = new RedisEventBus({
      publisher: this.redis,
      subscriber,
      channel: this.keys.channel,
      ...(options.logger && { logger: options.logger }),
    });
  }

  /** Connects (when the client is the store's own) and subscribes to the events channel. */
  init(): Promise<void> {
    this.initialising ??= (async () => {
      if (this.ownClient && this.redis.status === 'wait') await this.redis.connect();
      await this.events.start();
    })().catch((error: unknown) => {
      // One line naming the store and the cause, for start-up failures (the password is never printed).
      const failure = StoreUnavailableError.opening(this.description, this.connectionError ?? error);
      // Let a later init() try again.
      this.initialising = undefined;
      throw failure;
    });
    return this.initialising;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.events.close();
    if (this.ownClient) await closeConnection(this.redis);
  }

  async insert(record: TaskRecord, limits: OwnerLimits = {}, along?: InsertAlong): Promise<InsertResult> {
    const k = this.keys;
    const entry = JSON.stringify([
      record.taskId,
      k.owner(record.owner),
      listMember(record.createdAt, record.taskId),
      k.active(record.owner),
      record.idempotencyKey === undefined ? null : k.idempotency(record.owner, record.idempotencyKey),
    ]);
    const reply = (await this.script('mcpTasksInsert', k.task(record.taskId), [
      JSON.stringify(record),
      record.version,
      entry,
      ...this.mutable(record),
      k.prefix,
      limits.maxActive ?? '',
      limits.maxStored ?? '',
      record.status,
      limits.maxStoredBytes ?? '',
      // The creation's timeline entries in the same script: one round trip fewer per task.
      ...(along?.timeline
        ? [this.timelineKeys.key(record.taskId), ...timelineArgs(along.timeline.entries, along.timeline.maxEntries)]
        : []),
    ])) as Reply[];
    if (reply[0] === 'ok') return { inserted: true };
    if (reply[0] === 'id') return { inserted: false, reason: 'duplicate_id' };
    if (reply[0] === 'limit') {
      const limit = reply[1] === 'active' || reply[1] === 'stored_bytes' ? reply[1] : 'stored';
      return { inserted: false, reason: 'limit', limit };
    }
    return { inserted: false, reason: 'duplicate_key', existing: decode(reply[1] ?? null, reply[2] ?? null) };
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const [data, lease] = await this.redis.hmget(this.keys.task(taskId), 'd', 'l');
    return data ? decode(data, lease ?? null) : undefined;
  }

  async getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord | undefined> {
    const reply = (await this.script('mcpTasksGetByKey', this.keys.idempotency(owner, key), [this.keys.prefix])) as
      Reply[] | null;
    return reply?.[0] ? decode(reply[0], reply[1] ?? null) : undefined;
  }

  async replace(next: TaskRecord, expectedVersion: number, along?: ReplaceAlong): Promise<boolean> {
    // spec R16 R51: the compare-and-set that keeps racing terminal transitions consistent. Owner, createdAt and
    // idempotencyKey never change after insert; their index entries are the ones made then.
    const args = [
      expectedVersion,
      JSON.stringify(next),
      next.version,
      ...this.mutable(next),
      this.keys.prefix,
      next.status,
    ];
    if (!along) return (await this.script('mcpTasksReplace', this.keys.task(next.taskId), args)) === 1;
    // The write, its timeline entries and its event in one script: one round trip where there were three.
    const { timeline, change } = along;
    const reply = await this.script('mcpTasksReplaceAlong', this.keys.task(next.taskId), [
      ...args,
      this.keys.channel,
      encodeTaskEvent(next.taskId, change),
      ...(timeline
        ? [this.timelineKeys.key(next.taskId), ...timelineArgs(timeline.entries, timeline.maxEntries)]
        : ['', 0]),
    ]);
    return reply === 1;
  }

  async delete(taskId: string): Promise<boolean> {
    return (await this.script('mcpTasksDelete', this.keys.task(taskId), [this.keys.prefix])) === 1;
  }

  async list(owner: string, options: { after?: ListPosition; limit: number; now: number }): Promise<TaskRecord[]> {
    const start = options.after ? `(${listMember(options.after.createdAt, options.after.taskId)}` : '+';
    const reply = (await this.script('mcpTasksList', this.keys.owner(owner), [
      start,
      '-',
      options.limit,
      options.now,
      this.keys.prefix,
      '',
    ])) as Reply[];
    return pairs(reply);
  }

  async countActive(owner: string): Promise<number> {
    return this.redis.scard(this.keys.active(owner));
  }

  async sweepExpired(now: number, limit: number): Promise<TaskRecord[]> {
    return pairs((await this.script('mcpTasksSweep', this.keys.expiry, [now, limit, this.keys.prefix])) as Reply[]);
  }

  async findStale(now: number, limit: number): Promise<TaskRecord[]> {
    return pairs((await this.script('mcpTasksFindStale', this.keys.leases, [now, limit, this.keys.prefix])) as Reply[]);
  }

  async renewLeases(runner: string, leaseUntil: number): Promise<void> {
    await this.script('mcpTasksRenew', this.keys.runner(runner), [leaseUntil, this.keys.prefix]);
  }

  async markFetched(taskId: string, at: number): Promise<void> {
    await this.script('mcpTasksMarkFetched', this.keys.task(taskId), [this.keys.prefix, at]);
  }

  async evictFetched(owner: string | undefined, limit: number): Promise<string[]> {
    const k = this.keys;
    const key = owner === undefined ? k.fetched : k.fetchedOf(owner);
    return (await this.script('mcpTasksEvictFetched', key, [k.prefix, limit])) as string[];
  }

  async storedBytes(): Promise<number> {
    return Number((await this.redis.get(this.keys.totalBytes)) ?? 0);
  }

  async storedBytesOf(owner: string): Promise<number> {
    // The per-owner hash the scripts keep for the byte cap (redisScripts.ts, `account`).
    return Number((await this.redis.hget(`${this.keys.prefix}ob`, owner)) ?? 0);
  }

  async getSecret(): Promise<Uint8Array> {
    if (this.secret) return this.secret;
    // The first process to get here wins; everyone else reads its value.
    await this.redis.set(this.keys.secret, randomBytes(32), 'NX');
    const value = await this.redis.getBuffer(this.keys.secret);
    if (!value) throw new Error('RedisStore: the cursor secret is missing after SET NX');
    this.secret = new Uint8Array(value);
    return this.secret;
  }

  /** Arguments of the indexes that follow a record's state: expiresAt, active, lease, runner set, native TTL. */
  private mutable(record: TaskRecord): Array<string | number> {
    const active = !isTerminal(record.status);
    const leased = active && record.leaseUntil !== undefined;
    // Relative to the writer's own clock (lastUpdatedAt), so a skew between it and Redis's clock cannot make
    // Redis drop a live record early.
    const ttl = record.expiresAt === null ? 0 : Math.max(0, record.expiresAt - record.lastUpdatedAt) + this.graceMs;
    return [
      record.expiresAt === null ? '' : record.expiresAt,
      active ? '1' : '0',
      leased ? (record.leaseUntil as number) : '',
      leased && record.runner !== undefined ? this.keys.runner(record.runner) : '',
      Math.max(1, Math.ceil(ttl)),
    ];
  }

  private script(name: ScriptName, key: string, args: Array<string | number>): Promise<unknown> {
    return (this.redis as unknown as Scripted)[name](key, ...args);
  }
}

function decode(data: string | null, lease: string | null): TaskRecord {
  if (data === null) throw new Error('RedisStore: missing record data');
  const record = JSON.parse(data) as TaskRecord;
  // While the task is active and leased, the lease field is renewed in place without rewriting the record.
  if (lease !== null) record.leaseUntil = Number(lease);
  return record;
}

function pairs(reply: Reply[]): TaskRecord[] {
  const records: TaskRecord[] = [];
  for (let i = 0; i < reply.length; i += 2) records.push(decode(reply[i] ?? null, reply[i + 1] ?? null));
  return records;
}
