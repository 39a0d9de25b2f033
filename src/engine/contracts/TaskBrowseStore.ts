import type { TaskRecord } from '../record/TaskRecord.js';
import type { TaskStatus } from '../record/TaskStatus.js';

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
  /** The tool called (`request.params.name`); only for a store that lists `tool` in `indexedFilters`. */
  tool?: string;
  /** The task's wire generation (`dialect`); only for a store that lists `dialect` in `indexedFilters`. */
  dialect?: string;
}

/**
 * Reads across owners for operators (the console): every query is a range of an index, so its cost follows the page
 * size, not the number of tasks stored.
 */
export interface TaskBrowseStore {
  init(): Promise<void>;
  /** The filters besides status, owner and creation range this store narrows by on indexes; others are checked per task read. */
  readonly indexedFilters?: readonly ('tool' | 'dialect')[];
  /** Up to `limit` unexpired tasks of any owner matching `filter`, newest first, strictly after `after`. */
  page(filter: BrowseFilter, options: { after?: BrowsePosition; limit: number; now: number }): Promise<TaskRecord[]>;
  /**
   * The text search of a page, evaluated by the store on at most `budget` tasks matching `filter`, read in page order
   * strictly after `after`: those whose id, idempotency key or arguments (as JSON) contain `text` (lower case, ASCII),
   * at most `limit`. `next` is where the search goes on: the last task returned once `limit` are found, else the last
   * task read; undefined when the filter's range ended. Optional: without it the console reads and checks the tasks.
   */
  searchText?(
    filter: BrowseFilter,
    text: string,
    options: { after?: BrowsePosition; limit: number; budget: number; now: number },
  ): Promise<{ records: TaskRecord[]; scanned: number; next?: BrowsePosition }>;
  /** Stored tasks by status (expired tasks not swept yet included). */
  counts(): Promise<Partial<Record<TaskStatus, number>>>;
}
