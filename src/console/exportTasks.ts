import type { TaskBrowseStore } from '../engine/index.js';
import { ConsoleRefusal } from './ConsoleRefusal.js';
import { parseTaskQuery, readTaskPage } from './TaskQuery.js';
import type { TaskSummary } from './taskViews.js';

/** Tasks one export holds at most: narrow the filter for more. */
export const MAX_EXPORT_TASKS = 10_000;
/** Tasks one export reads at most looking for matches (a filter checked per task). */
const MAX_EXPORT_SCANNED = 100_000;
const PAGE = 200;

const COLUMNS = [
  'taskId',
  'tool',
  'owner',
  'generation',
  'status',
  'statusMessage',
  'createdAt',
  'terminalAt',
  'durationMs',
  'attempts',
] as const;

/**
 * The list's current filter as a download: CSV (one header row, times in ISO 8601) or JSON lines (one task summary a
 * line), newest first, page by page as the list reads them, at most `MAX_EXPORT_TASKS` tasks.
 */
export function exportTasks(browse: TaskBrowseStore, params: URLSearchParams, now: number): Response {
  const format = params.get('format');
  if (format !== 'csv' && format !== 'jsonl') throw new ConsoleRefusal(400, 'format must be csv or jsonl');
  const query = parseTaskQuery(params, PAGE);
  query.limit = PAGE;
  let written = 0;
  let scanned = 0;
  let started = false;
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started && format === 'csv') controller.enqueue(encoder.encode(`${COLUMNS.join(',')}\r\n`));
      started = true;
      const page = await readTaskPage(browse, query, now);
      scanned += page.scanned;
      const tasks = page.tasks.slice(0, MAX_EXPORT_TASKS - written);
      written += tasks.length;
      const lines = tasks.map((task) => (format === 'csv' ? csvRow(task) : `${JSON.stringify(task)}\n`));
      if (lines.length > 0) controller.enqueue(encoder.encode(lines.join('')));
      if (!page.nextCursor || written >= MAX_EXPORT_TASKS || scanned >= MAX_EXPORT_SCANNED) {
        controller.close();
        return;
      }
      query.after = decodePosition(page.nextCursor);
    },
  });
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  return new Response(body, {
    headers: {
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="mcp-tasks-${stamp}.${format}"`,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
  });
}

function csvRow(task: TaskSummary): string {
  const iso = (ms: number | undefined) => (ms === undefined ? '' : new Date(ms).toISOString());
  const values: Record<(typeof COLUMNS)[number], string> = {
    taskId: task.taskId,
    tool: task.tool ?? '',
    owner: task.owner,
    generation: task.generation,
    status: task.status,
    statusMessage: task.statusMessage ?? '',
    createdAt: iso(task.createdAt),
    terminalAt: iso(task.terminalAt),
    durationMs: task.durationMs === undefined ? '' : String(task.durationMs),
    attempts: String(task.attempts),
  };
  return `${COLUMNS.map((column) => csvCell(values[column])).join(',')}\r\n`;
}

/**
 * One CSV cell: quoted when it holds a separator, quote or line break; a text a spreadsheet would run as a formula
 * (=, +, -, @, tab, CR first) gets a leading apostrophe (OWASP's CSV injection advice).
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function decodePosition(cursor: string) {
  return parseTaskQuery(new URLSearchParams({ cursor }), PAGE).after;
}
