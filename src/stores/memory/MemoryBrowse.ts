import type { BrowseFilter, ListPosition, TaskBrowseStore, TaskRecord, TaskStatus } from '../../engine/index.js';

/** What the memory store lends its browse view: positions of every task, newest first, and a reader. */
export interface MemoryBrowseSource {
  positions(): readonly ListPosition[];
  positionsOf(owner: string): readonly ListPosition[];
  /** The record with its expiry, or undefined once gone. */
  read(taskId: string): TaskRecord | undefined;
  seek(positions: readonly ListPosition[], after: ListPosition): number;
}

/** Operators' reads over the memory store's sorted positions (one binary search, then the page). */
export class MemoryBrowse implements TaskBrowseStore {
  constructor(private readonly source: MemoryBrowseSource) {}

  async init(): Promise<void> {}

  async page(
    filter: BrowseFilter,
    options: { after?: ListPosition; limit: number; now: number },
  ): Promise<TaskRecord[]> {
    const positions = filter.owner === undefined ? this.source.positions() : this.source.positionsOf(filter.owner);
    let index = 0;
    const start =
      options.after ??
      (filter.createdTo === undefined ? undefined : { createdAt: filter.createdTo, taskId: '\u{10ffff}' });
    if (start) index = this.source.seek(positions, start);
    if (!options.after && filter.createdTo !== undefined) {
      while (index < positions.length && (positions[index] as ListPosition).createdAt >= filter.createdTo) index++;
    }
    const page: TaskRecord[] = [];
    for (; index < positions.length && page.length < options.limit; index++) {
      const position = positions[index] as ListPosition;
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
    for (const position of this.source.positions()) {
      const status = this.source.read(position.taskId)?.status;
      if (status) counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  }
}
