/**
 * Every status a requestor can observe across the three generations. `submitted` and `unknown` exist only in
 * SEP-1686; the 2025-11-25 core and the 2026 extension use the other five.
 */
export const TASK_STATUSES = [
  'submitted',
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
  'unknown',
] as const;

export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses after which a task never changes again (spec R17; SEP-1686 adds `unknown`). */
export type TerminalTaskStatus = 'completed' | 'failed' | 'cancelled' | 'unknown';

const TERMINAL: ReadonlySet<string> = new Set<TerminalTaskStatus>(['completed', 'failed', 'cancelled', 'unknown']);

export function isTerminalStatus(status: TaskStatus): status is TerminalTaskStatus {
  return TERMINAL.has(status);
}

export function isTaskStatus(value: unknown): value is TaskStatus {
  return typeof value === 'string' && (TASK_STATUSES as readonly string[]).includes(value);
}
