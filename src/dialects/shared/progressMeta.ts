import type { TaskRecord } from '../../engine/index.js';
import { PROGRESS_META } from '../../protocol/index.js';

/**
 * The task's latest progress as `_meta` of a `tasks/get` result or a status push, merged into `meta` (the result's
 * other `_meta`); `meta` as it was when the task has reported none. Every generation allows `_meta` there, so the
 * 2026 extension (no progress on tasks, spec E16) and SEP-1686 show progress too, and no wire's fields change.
 */
export function withProgressMeta(
  record: TaskRecord,
  meta?: Record<string, unknown>,
): { _meta?: Record<string, unknown> } {
  const progress = record.progress;
  if (progress === undefined) return meta === undefined ? {} : { _meta: meta };
  return {
    _meta: {
      ...meta,
      [PROGRESS_META]: {
        progress: progress.progress,
        ...(progress.total !== undefined && { total: progress.total }),
        ...(progress.message !== undefined && { message: progress.message }),
      },
    },
  };
}
