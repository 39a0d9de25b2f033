import type { TaskRecord } from './TaskRecord.js';
import type { TaskStatus } from './TaskStatus.js';

/** A keyset position across owners: newest first, ties broken by task id (the shape of the store's ListPosition). */
export interface BrowsePosition {
  createdAt: number;
  taskId: string;
}

/** What an operator's view narrows tasks by on the store's indexes; anything else is filtered on the pages read. */
export interface BrowseFilter {
  status?: TaskStatus;
  owner?: string;
  /** Created at or after (epoch ms). */
  createdFrom?: number;
  /** Created before (epoch ms). */
  createdTo?: number;
}

/**
 * Reads across owners for operators (the console): every query is a range of an index, so its cost follows the page
 * size, not the number of tasks stored.
 */
export interface TaskBrowseStore {
  init(): Promise<void>;
  /** Up to `limit` unexpired tasks of any owner matching `filter`, newest first, strictly after `after`. */
  page(filter: BrowseFilter, options: { after?: BrowsePosition; limit: number; now: number }): Promise<TaskRecord[]>;
  /** Stored tasks by status (expired tasks not swept yet included). */
  counts(): Promise<Partial<Record<TaskStatus, number>>>;
}
