import { TASK_GENERATIONS, type TaskGeneration } from '../protocol/index.js';

/**
 * The wire generation a handle speaks: `2025-11-25` core tasks, the `io.modelcontextprotocol/tasks` extension on the
 * 2026-07-28 wire (`ext-2026`), the SEP-1686 proposal, or `none` when the server offers no tasks and calls run plainly.
 * The names are the protocol's generation names, the same the server records.
 */
export const DIALECT_NAMES = [...TASK_GENERATIONS, 'none'] as const;

export type DialectName = TaskGeneration | 'none';

/** What a host may ask for: one dialect, or `auto` to pick from what the server advertises. */
export type DialectPreference = 'auto' | TaskGeneration;

export function isDialectPreference(value: unknown): value is DialectPreference {
  return value === 'auto' || (TASK_GENERATIONS as readonly unknown[]).includes(value);
}
