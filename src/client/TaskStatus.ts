import { SEP_STATUSES } from '../protocol/index.js';

/**
 * Every status a requestor can observe across the three generations: SEP-1686's list, a superset of the others
 * (`submitted` and `unknown` exist only there; the 2025-11-25 core and the 2026 extension use the other five).
 */
export const TASK_STATUSES = SEP_STATUSES;

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
