import { randomBytes } from 'node:crypto';

import type { Redis } from 'ioredis';

import type { EventStreamLog, NewStreamedEvent, StreamedEvent } from '../../engine/index.js';

/** KEYS[1] the epoch. ARGV[1] a new epoch, kept only when the stream has none. Replies the stream's epoch. */
const EPOCH = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`;

/**
 * KEYS[1] the entry list, KEYS[2] the next-seq counter, KEYS[3] the epoch. ARGV: a new epoch, keep, the entry's JSON
 * without its seq (an object of at least one field). Replies the entry's seq. The seq is spliced into the entry's
 * text rather than re-encoded with cjson, which would alter the data (empty arrays, large numbers).
 */
const APPEND = `
redis.call('SET', KEYS[3], ARGV[1], 'NX')
local seq = redis.call('INCR', KEYS[2]) - 1
redis.call('RPUSH', KEYS[1], '{"seq":' .. string.format('%d', seq) .. ',' .. string.sub(ARGV[3], 2))
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
return seq`;

/**
 * KEYS[1] the entry list, KEYS[2] the next-seq counter. ARGV: from, limit. Replies up to limit entries with
 * seq >= from. The list holds the newest entries, so its first has seq counter - length; both are read in the script,
 * so an append in between cannot shift the positions.
 */
const READ = `
local head = tonumber(redis.call('GET', KEYS[2]) or '0')
local first = head - redis.call('LLEN', KEYS[1])
local from = math.max(tonumber(ARGV[1]), first)
if from >= head then return {} end
local start = from - first
return redis.call('LRANGE', KEYS[1], start, start + tonumber(ARGV[2]) - 1)`;

interface Scripted {
  mcpTasksStreamEpoch(epoch: string, candidate: string): Promise<string>;
  mcpTasksStreamAppend(
    list: string,
    counter: string,
    epoch: string,
    candidate: string,
    keep: number,
    entry: string,
  ): Promise<number>;
  mcpTasksStreamRead(list: string, counter: string, from: number, limit: number): Promise<string[]>;
}

/**
 * The untasked event types' bounded logs under the store's prefix: per stream a list of its newest entries (as JSON
 * with their seq), a counter of the next seq and the epoch.
 */
export class RedisEventStreams implements EventStreamLog {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('mcpTasksStreamEpoch', { numberOfKeys: 1, lua: EPOCH });
    redis.defineCommand('mcpTasksStreamAppend', { numberOfKeys: 3, lua: APPEND });
    redis.defineCommand('mcpTasksStreamRead', { numberOfKeys: 2, lua: READ });
  }

  async init(): Promise<void> {}

  async epoch(stream: string): Promise<string> {
    return this.scripted().mcpTasksStreamEpoch(this.epochKey(stream), newEpoch());
  }

  async append(stream: string, event: NewStreamedEvent, keep: number): Promise<number> {
    const entry = JSON.stringify({ at: event.at, owner: event.owner, data: event.data });
    return this.scripted().mcpTasksStreamAppend(
      this.list(stream),
      this.counter(stream),
      this.epochKey(stream),
      newEpoch(),
      Math.max(1, keep),
      entry,
    );
  }

  async read(stream: string, from: number, limit: number): Promise<StreamedEvent[]> {
    if (limit <= 0) return [];
    const texts = await this.scripted().mcpTasksStreamRead(
      this.list(stream),
      this.counter(stream),
      Math.max(0, from),
      limit,
    );
    return texts.map((text) => JSON.parse(text) as StreamedEvent);
  }

  async head(stream: string): Promise<number> {
    return Number((await this.redis.get(this.counter(stream))) ?? 0);
  }

  private scripted(): Scripted {
    return this.redis as unknown as Scripted;
  }

  private list(stream: string): string {
    return `${this.prefix}es:${stream}`;
  }

  private counter(stream: string): string {
    return `${this.prefix}esn:${stream}`;
  }

  private epochKey(stream: string): string {
    return `${this.prefix}ese:${stream}`;
  }
}

function newEpoch(): string {
  return randomBytes(6).toString('base64url');
}
