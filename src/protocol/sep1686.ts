import * as z from 'zod';

import { metaOf } from './wireObject.js';

/**
 * SEP-1686 as proposed (TASKS-SPEC §2): the requestor names the task in `_meta`, the original request still gets its
 * normal response, and the task is a side channel for polling and late retrieval.
 */
export const SEP_GENERATION = 'sep-1686';

/** The proposal's spellings (§3.1): note the reversed domain compared with 2025-11-25. */
export const SEP_TASK_META = 'modelcontextprotocol.io/task';
export const SEP_RELATED_TASK_META = 'modelcontextprotocol.io/related-task';

export const SepMethod = {
  get: 'tasks/get',
  result: 'tasks/result',
  list: 'tasks/list',
  delete: 'tasks/delete',
  /** Announces the task on the original request's stream, racing its response (§3.4). */
  created: 'notifications/tasks/created',
} as const;

/** The task methods of the proposal (cancellation is `notifications/cancelled` for the original request). */
export const SEP_TASK_METHODS = [SepMethod.get, SepMethod.result, SepMethod.list, SepMethod.delete] as const;
export type SepTaskMethod = (typeof SEP_TASK_METHODS)[number];

/** The proposal's statuses: `submitted` before the work starts, `unknown` for a task whose run was lost. */
export const SEP_STATUSES = [
  'submitted',
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
  'unknown',
] as const;
export const SepStatusSchema = z.enum(SEP_STATUSES);
export type SepStatus = z.infer<typeof SepStatusSchema>;

/** A task as the proposal's tasks/get and tasks/list describe it (§6): no timestamps, `keepAlive`, `pollFrequency`. */
export const SepTaskSchema = z.looseObject({
  taskId: z.string(),
  status: SepStatusSchema,
  keepAlive: z.number().nullable().optional(),
  pollFrequency: z.number().optional(),
  error: z.string().optional(),
});
export type SepTask = z.infer<typeof SepTaskSchema>;

export const SepTaskListSchema = z.looseObject({ tasks: z.array(SepTaskSchema), nextCursor: z.string().optional() });

/** `_meta["modelcontextprotocol.io/task"]` of a request, if present. */
export function sepTaskMeta(params: Record<string, unknown> | undefined): unknown {
  return metaOf(params)?.[SEP_TASK_META];
}

/** Whether a request carries the proposal's related-task key (its task requests always do, spec 4.7). */
export function carriesSepRelatedTask(params: Record<string, unknown> | undefined): boolean {
  const meta = metaOf(params);
  return meta !== undefined && SEP_RELATED_TASK_META in meta;
}

/** `{ [SEP_RELATED_TASK_META]: { taskId } }`, for a `_meta` object. */
export function sepRelatedMeta(taskId: string): Record<string, unknown> {
  return { [SEP_RELATED_TASK_META]: { taskId } };
}
