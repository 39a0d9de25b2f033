import type { Redis } from 'ioredis';

import type { TaskTimelineStore, TimelineEntry } from '../../engine/index.js';

/**
 * KEYS[1] timeline list, KEYS[2] task hash. ARGV: maxEntries, entries... Appends, keeps the first and the newest
 * entries, and gives the list the task's own native expiry, so a timeline never outlives its task.
 */
const APPEND = `
local n = redis.call('RPUSH', KEYS[1], unpack(ARGV, 2))
local max = tonumber(ARGV[1])
if n > max then
  local first = redis.call('LINDEX', KEYS[1], 0)
  redis.call('LTRIM', KEYS[1], -(max - 1), -1)
  redis.call('LPUSH', KEYS[1], first)
end
local ttl = redis.call('PTTL', KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('PERSIST', KEYS[1]) end
return n`;

interface Scripted {
  mcpTasksTimelineAppend(list: string, task: string, max: number, ...entries: string[]): Promise<number>;
}

/** Each task's timeline as a Redis list under the store's prefix. */
export class RedisTimeline implements TaskTimelineStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    redis.defineCommand('mcpTasksTimelineAppend', { numberOfKeys: 2, lua: APPEND });
  }

  async init(): Promise<void> {}

  async append(taskId: string, entries: TimelineEntry[], maxEntries: number): Promise<void> {
    if (entries.length === 0) return;
    await (this.redis as unknown as Scripted).mcpTasksTimelineAppend(
      this.key(taskId),
      `${this.prefix}t:${taskId}`,
      Math.max(2, maxEntries),
      ...entries.map((entry) => JSON.stringify(entry)),
    );
  }

  async read(taskId: string): Promise<TimelineEntry[]> {
    return (await this.redis.lrange(this.key(taskId), 0, -1)).map((text) => JSON.parse(text) as TimelineEntry);
  }

  async remove(taskId: string): Promise<void> {
    await this.redis.del(this.key(taskId));
  }

  private key(taskId: string): string {
    return `${this.prefix}tl:${taskId}`;
  }
}
