import type { Redis } from 'ioredis';

import type { EventAppendResult, LoggedEvent, NewLoggedEvent, TaskEventLog } from '../../engine/index.js';

/**
 * KEYS[1] the entry list, KEYS[2] the hash key → seq. ARGV: key ('' for none), maxEvents, entry JSON. Replies
 * `{1, seq}` appended, `{0, seq}` a duplicate key, `{-1, 0}` at the bound.
 */
const APPEND = `
if ARGV[1] ~= '' then
  local known = redis.call('HGET', KEYS[2], ARGV[1])
  if known then return {0, tonumber(known)} end
end
local n = redis.call('LLEN', KEYS[1])
if n >= tonumber(ARGV[2]) then return {-1, 0} end
redis.call('RPUSH', KEYS[1], ARGV[3])
if ARGV[1] ~= '' then redis.call('HSET', KEYS[2], ARGV[1], n) end
return {1, n}`;

interface Scripted {
  mcpTasksEventLogAppend(
    list: string,
    keys: string,
    key: string,
    max: number,
    entry: string,
  ): Promise<[number, number]>;
}

/**
 * Each task's event log as a Redis list under the store's prefix (an entry's `seq` is its index: entries are only
 * appended, and removed only with the whole list), plus a hash of its idempotency keys.
 */
export class RedisTaskEventLog implements TaskEventLog {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('mcpTasksEventLogAppend', { numberOfKeys: 2, lua: APPEND });
  }

  async init(): Promise<void> {}

  async append(taskId: string, event: NewLoggedEvent, maxEvents: number): Promise<EventAppendResult> {
    const entry = JSON.stringify({ type: event.type, at: event.at, data: event.data });
    const [state, seq] = await (this.redis as unknown as Scripted).mcpTasksEventLogAppend(
      this.list(taskId),
      this.keys(taskId),
      event.key ?? '',
      maxEvents,
      entry,
    );
    if (state === 1) return { appended: true, seq };
    if (state === 0) return { appended: false, reason: 'duplicate', seq };
    return { appended: false, reason: 'limit' };
  }

  async read(taskId: string, from: number, limit: number): Promise<LoggedEvent[]> {
    if (limit <= 0) return [];
    const start = Math.max(0, from);
    const texts = await this.redis.lrange(this.list(taskId), start, start + limit - 1);
    return texts.map((text, index) => ({ seq: start + index, ...(JSON.parse(text) as Omit<LoggedEvent, 'seq'>) }));
  }

  async length(taskId: string): Promise<number> {
    return this.redis.llen(this.list(taskId));
  }

  async remove(taskId: string): Promise<void> {
    await this.redis.del(this.list(taskId), this.keys(taskId));
  }

  private list(taskId: string): string {
    return `${this.prefix}ev:${taskId}`;
  }

  private keys(taskId: string): string {
    return `${this.prefix}evk:${taskId}`;
  }
}
