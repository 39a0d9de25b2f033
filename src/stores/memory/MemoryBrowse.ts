import type { BrowseFilter, ListPosition, TaskBrowseStore, TaskRecord, TaskStatus } from '../../engine/index.js';
import type { TaskPositions } from './TaskPositions.js';

/** What the memory store lends its browse view: positions of every task, newest first, and a reader. */
export interface MemoryBrowseSource {
  positions(): TaskPositions;
  /** Undefined for an owner without tasks. */
  positionsOf(owner: string): TaskPositions | undefined;
  /** The record with its expiry, or undefined once gone. */
  read(taskId: string): TaskRecord | undefined;
}

/** Operators' reads over the memory store's sorted positions (one tree search, then the page). */
export class MemoryBrowse implements TaskBrowseStore {
  constructor(private readonly source: MemoryBrowseSource) {}

  async init(): Promise<void> {}

  async page(
    filter: BrowseFilter,
    options: { after?: ListPosition; limit: number; now: number },
  ): Promise<TaskRecord[]> {
    const positions = filter.owner === undefined ? this.source.positions() : this.source.positionsOf(filter.owner);
    // Without a cursor, the page starts at the newest task created before `createdTo`.
    const start =
      options.after ??
      (filter.createdTo === undefined ? undefined : { createdAt: filter.createdTo, taskId: '\u{10ffff}' });
    const page: TaskRecord[] = [];
    for (const position of positions?.after(start) ?? []) {
      if (page.length >= options.limit) break;
      if (!options.after && filter.createdTo !== undefined && position.createdAt >= filter.createdTo) continue;
      if (filter.createdFrom !== undefined && position.createdAt < filter.createdFrom) break;
      const record = this.source.read(position.taskId);
      if (!record || (record.expiresAt !== null && record.expiresAt <= options.now)) continue;
      if (filter.status !== undefined && record.status !== filter.status) continue;
      page.push(record);
    }
    return page;
  }

  async counts(): Promise<Partial<Record<TaskStatus, number>>> {
    const counts: Partial<Record<TaskStatus, number>> = {};
    for (const position of this.source.positions().after()) {
      const status = this.source.read(position.taskId)?.status;
      if (status) counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  }
}
