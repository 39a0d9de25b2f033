import type { Redis } from 'ioredis';

import type { BrowseFilter, ListPosition, TaskBrowseStore, TaskRecord, TaskStatus } from '../../engine/index.js';
import { listMember, type RedisKeys } from './redisKeys.js';
import { BROWSE } from './redisScripts.js';

const STATUSES: TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

interface Scripted {
  mcpTasksBrowse(key: string, ...args: Array<string | number>): Promise<Array<string | null>>;
}

/**
 * Operators' reads over the store's zsets: every task, one per status, and the owners' own, all ordered by creation
 * (tasks written before these indexes existed are not in them).
 */
export class RedisBrowse implements TaskBrowseStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly decode: (data: string | null, lease: string | null) => TaskRecord,
  ) {
    redis.defineCommand('mcpTasksBrowse', { numberOfKeys: 1, lua: BROWSE });
  }

  async init(): Promise<void> {}

  async page(
    filter: BrowseFilter,
    options: { after?: ListPosition; limit: number; now: number },
  ): Promise<TaskRecord[]> {
    const prefix = this.keys.prefix;
    // Walk the narrowest zset; a status with an owner is checked per task.
    const walk =
      filter.owner !== undefined
        ? this.keys.owner(filter.owner)
        : filter.status !== undefined
          ? `${prefix}s:${filter.status}`
          : `${prefix}all`;
    const start = options.after
      ? `(${listMember(options.after.createdAt, options.after.taskId)}`
      : filter.createdTo !== undefined
        ? `(${listMember(filter.createdTo, '')}`
        : '+';
    const stop = filter.createdFrom !== undefined ? `[${listMember(filter.createdFrom, '')}` : '-';
    const reply = await (this.redis as unknown as Scripted).mcpTasksBrowse(
      walk,
      start,
      stop,
      options.limit,
      options.now,
      prefix,
      filter.owner !== undefined && filter.status !== undefined ? filter.status : '',
    );
    const records: TaskRecord[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      const record = this.decode(reply[i] ?? null, reply[i + 1] ?? null);
      if (filter.createdTo === undefined || record.createdAt < filter.createdTo) records.push(record);
    }
    return records;
  }

  async counts(): Promise<Partial<Record<TaskStatus, number>>> {
    const pipeline = this.redis.pipeline();
    for (const status of STATUSES) pipeline.zcard(`${this.keys.prefix}s:${status}`);
    const replies = (await pipeline.exec()) ?? [];
    const counts: Partial<Record<TaskStatus, number>> = {};
    STATUSES.forEach((status, i) => {
      const n = Number(replies[i]?.[1] ?? 0);
      if (n > 0) counts[status] = n;
    });
    return counts;
  }
}
