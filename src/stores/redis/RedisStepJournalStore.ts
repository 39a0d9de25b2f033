import type { Redis } from 'ioredis';

import type { StepJournalStore, StepRow, WakeEntry } from '../../engine/index.js';

const FENCE = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current > tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1`;

const WRITE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1`;

const CLEAR_WAKE = `
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0`;

interface Scripted {
  mcpTasksJournalFence(fence: string, attempt: number): Promise<number>;
  mcpTasksJournalWrite(fence: string, steps: string, attempt: number, name: string, data: string): Promise<number>;
  mcpTasksJournalClearWake(wakes: string, taskId: string, wakeAt: number): Promise<number>;
}

/**
 * The step journal in Redis under the store's prefix: a hash of step rows per task, a string holding the task's
 * fence (the latest attempt to claim it), and one zset of durable timers. Fence checks and writes are one script.
 */
export class RedisStepJournalStore implements StepJournalStore {
  private readonly wakes: string;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.wakes = `${prefix}wakes`;
    redis.defineCommand('mcpTasksJournalFence', { numberOfKeys: 1, lua: FENCE });
    redis.defineCommand('mcpTasksJournalWrite', { numberOfKeys: 2, lua: WRITE });
    redis.defineCommand('mcpTasksJournalClearWake', { numberOfKeys: 1, lua: CLEAR_WAKE });
  }

  async init(): Promise<void> {}

  async fence(taskId: string, attempt: number): Promise<boolean> {
    return (await this.scripts().mcpTasksJournalFence(this.fenceKey(taskId), attempt)) === 1;
  }

  async read(taskId: string): Promise<StepRow[]> {
    const rows = await this.redis.hvals(this.steps(taskId));
    return rows.map((text) => JSON.parse(text) as StepRow);
  }

  async write(taskId: string, attempt: number, row: StepRow): Promise<boolean> {
    const written = await this.scripts().mcpTasksJournalWrite(
      this.fenceKey(taskId),
      this.steps(taskId),
      attempt,
      row.name,
      JSON.stringify(row),
    );
    return written === 1;
  }

  async remove(taskId: string): Promise<void> {
    await this.redis.multi().del(this.fenceKey(taskId), this.steps(taskId)).zrem(this.wakes, taskId).exec();
  }

  async setWake(taskId: string, wakeAt: number): Promise<void> {
    await this.redis.zadd(this.wakes, wakeAt, taskId);
  }

  async clearWake(taskId: string, wakeAt: number): Promise<void> {
    await this.scripts().mcpTasksJournalClearWake(this.wakes, taskId, wakeAt);
  }

  async due(until: number, limit: number): Promise<WakeEntry[]> {
    const flat = await this.redis.zrangebyscore(this.wakes, '-inf', until, 'WITHSCORES', 'LIMIT', 0, limit);
    const due: WakeEntry[] = [];
    for (let i = 0; i < flat.length; i += 2) due.push({ taskId: flat[i] as string, wakeAt: Number(flat[i + 1]) });
    return due;
  }

  private fenceKey(taskId: string): string {
    return `${this.prefix}jf:${taskId}`;
  }

  private steps(taskId: string): string {
    return `${this.prefix}js:${taskId}`;
  }

  private scripts(): Scripted {
    return this.redis as unknown as Scripted;
  }
}
