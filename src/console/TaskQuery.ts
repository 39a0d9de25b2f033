import {
  TASK_STATUSES,
  type BrowseFilter,
  type BrowsePosition,
  type TaskBrowseStore,
  type TaskRecord,
  type TaskStatus,
} from '../engine/index.js';
import { summaryOf, toolOf, type TaskSummary } from './taskViews.js';

/** The list's filters: the store narrows by status, owner and creation range; the rest is checked per task read. */
export interface TaskQuery {
  filter: BrowseFilter;
  tool?: string;
  generation?: string;
  /** Text looked for in the task id, the requestor's own id (SEP-1686) and the arguments (case-insensitive). */
  text?: string;
  after?: BrowsePosition;
  limit: number;
}

export interface TaskPage {
  tasks: TaskSummary[];
  /** Where the next page starts: after the last task read, matching or not. */
  nextCursor?: string;
  /** Tasks read for this page (at most the scan budget). */
  scanned: number;
}

/** At most this many tasks are read for one page, so a filter that matches little stays as cheap as one that matches much. */
export const SCAN_BUDGET = 1000;
const BATCH = 100;

/** Parses the list's query string; anything malformed is a readable error. */
export function parseTaskQuery(params: URLSearchParams, pageSize: number): TaskQuery {
  const query: TaskQuery = { filter: {}, limit: pageSize };
  const status = params.get('status') || undefined;
  if (status !== undefined) {
    if (!(TASK_STATUSES as readonly string[]).includes(status)) throw new QueryError(`unknown status: ${status}`);
    query.filter.status = status as TaskStatus;
  }
  const owner = params.get('owner') || undefined;
  if (owner !== undefined) query.filter.owner = owner;
  const from = time(params.get('from'), 'from');
  if (from !== undefined) query.filter.createdFrom = from;
  const to = time(params.get('to'), 'to');
  if (to !== undefined) query.filter.createdTo = to;
  for (const key of ['tool', 'generation', 'text'] as const) {
    const value = params.get(key === 'text' ? 'q' : key)?.trim();
    if (value) query[key] = value;
  }
  const cursor = params.get('cursor');
  if (cursor) query.after = decodeCursor(cursor);
  const limit = params.get('limit');
  if (limit) query.limit = Math.max(1, Math.min(200, Number.parseInt(limit, 10) || pageSize));
  return query;
}

export class QueryError extends Error {}

/** One page of the list, read in batches of the store's index order until the page is full or the budget spent. */
export async function readTaskPage(browse: TaskBrowseStore, query: TaskQuery, now: number): Promise<TaskPage> {
  const tasks: TaskSummary[] = [];
  let after = query.after;
  let scanned = 0;
  let exhausted = false;
  // The tool and generation filters go to the store where it has indexes for them; the rest is checked here.
  const indexed = browse.indexedFilters ?? [];
  const filter: BrowseFilter = { ...query.filter };
  const rest: TaskQuery = { ...query };
  if (query.tool !== undefined && indexed.includes('tool')) {
    filter.tool = query.tool;
    delete rest.tool;
  }
  if (query.generation !== undefined && indexed.includes('dialect')) {
    filter.dialect = query.generation;
    delete rest.generation;
  }
  const text = rest.text?.toLowerCase();
  // The store's lower() folds ASCII only: other text is checked here.
  if (
    text !== undefined &&
    rest.tool === undefined &&
    rest.generation === undefined &&
    browse.searchText &&
    /^[\x20-\x7e]*$/.test(text)
  ) {
    const found = await browse.searchText(filter, text, {
      limit: query.limit,
      budget: SCAN_BUDGET,
      now,
      ...(after && { after }),
    });
    const page: TaskPage = { tasks: found.records.map(summaryOf), scanned: found.scanned };
    if (found.next) page.nextCursor = encodeCursor(found.next);
    return page;
  }
  const matches = matcher(rest);
  while (tasks.length < query.limit && scanned < SCAN_BUDGET) {
    const want = matches ? BATCH : query.limit - tasks.length;
    const batch = await browse.page(filter, { limit: want, now, ...(after && { after }) });
    let read = 0;
    for (const record of batch) {
      read++;
      after = { createdAt: record.createdAt, taskId: record.taskId };
      if (!matches || matches(record)) tasks.push(summaryOf(record));
      if (tasks.length >= query.limit) break;
    }
    scanned += read;
    // A short batch read to its end: nothing more matches the store's part of the filter.
    if (batch.length < want && read === batch.length) {
      exhausted = true;
      break;
    }
  }
  const page: TaskPage = { tasks, scanned };
  if (!exhausted && after) page.nextCursor = encodeCursor(after);
  return page;
}

function matcher(query: TaskQuery): ((record: TaskRecord) => boolean) | undefined {
  const { tool, generation, text } = query;
  if (tool === undefined && generation === undefined && text === undefined) return undefined;
  const needle = text?.toLowerCase();
  return (record) =>
    (tool === undefined || toolOf(record) === tool) &&
    (generation === undefined || record.dialect === generation) &&
    (needle === undefined ||
      record.taskId.toLowerCase().includes(needle) ||
      (record.idempotencyKey?.toLowerCase().includes(needle) ?? false) ||
      JSON.stringify(record.request.params['arguments'] ?? null)
        .toLowerCase()
        .includes(needle));
}

function time(value: string | null, name: string): number | undefined {
  if (!value) return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) throw new QueryError(`${name} is not a time: ${value}`);
  return ms;
}

export function encodeCursor(position: BrowsePosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.taskId])).toString('base64url');
}

function decodeCursor(cursor: string): BrowsePosition {
  try {
    const [createdAt, taskId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'number' && typeof taskId === 'string') return { createdAt, taskId };
  } catch {
    // falls through to the error below
  }
  throw new QueryError('the cursor is not one this console made');
}
