import * as z from 'zod';

import { isObject } from './wireObject.js';

/**
 * The project's `_meta` key for a task's latest progress on `tasks/get` (and the status pushes that carry a whole
 * task): `{ progress, total?, message? }`, as `notifications/progress` carries it. The 2026 extension has no progress
 * at all (spec E16) and SEP-1686 none after the initial response, so `_meta` (allowed on every result and
 * notification) is the one place every generation can carry it without changing its wire.
 */
export const PROGRESS_META = 'dev.mcp-tasks/progress';

export const ProgressMetaSchema = z.object({
  progress: z.number(),
  total: z.number().optional(),
  message: z.string().optional(),
});
export type ProgressMeta = z.infer<typeof ProgressMetaSchema>;

/** The progress a result or notification carries under PROGRESS_META; undefined when absent or malformed. */
export function progressFromMeta(value: Record<string, unknown>): ProgressMeta | undefined {
  const meta = value['_meta'];
  if (!isObject(meta)) return undefined;
  const parsed = ProgressMetaSchema.safeParse(meta[PROGRESS_META]);
  return parsed.success ? parsed.data : undefined;
}
