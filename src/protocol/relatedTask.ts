import { RELATED_TASK_META } from './core20251125.js';
import { SEP_RELATED_TASK_META } from './sep1686.js';
import { isObject, metaOf } from './wireObject.js';

/** The task id a request or notification names in its related-task `_meta` (2025-11-25 or SEP-1686 spelling). */
export function relatedTaskId(params: Record<string, unknown> | undefined): string | undefined {
  const meta = metaOf(params);
  for (const key of [RELATED_TASK_META, SEP_RELATED_TASK_META]) {
    const related = meta?.[key];
    if (isObject(related) && typeof related['taskId'] === 'string') return related['taskId'];
  }
  return undefined;
}
