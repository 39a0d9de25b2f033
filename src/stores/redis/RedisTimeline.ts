import type { Redis } from 'ioredis';

import type { TaskTimelineStore, TimelineEntry } from '../../engine/index.js';
import { TIMELINE_APPEND_FN } from './redisScripts.js';

/** KEYS[1] timeline list, KEYS[2] task hash. ARGV: maxEntries, entries... */
const APPEND = `${TIMELINE_APPEND_FN}
return append_timeline(KEYS[1], KEYS[2], tonumber(ARGV[1]), 2, 'same')`;

interface Scripted {
  mcpTasksTimelineAppend(list: string, task: string, ...maxThenEntries: Array<string | number>): Promise<number>;
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
      ...timelineArgs(entries, maxEntries),
    );
  }

  async read(taskId: string): Promise<TimelineEntry[]> {
    return (await this.redis.lrange(this.key(taskId), 0, -1)).map((text) => JSON.parse(text) as TimelineEntry);
  }

  async remove(taskId: string): Promise<void> {
    await this.redis.del(this.key(taskId));
  }

  key(taskId: string): string {
    return `${this.prefix}tl:${taskId}`;
  }
}

/** The script arguments of an append: the bound (a timeline keeps at least its first and newest entry), the entries. */
export function timelineArgs(entries: TimelineEntry[], maxEntries: number): Array<string | number> {
  return [Math.max(2, maxEntries), ...entries.map((entry) => JSON.stringify(entry))];
}
