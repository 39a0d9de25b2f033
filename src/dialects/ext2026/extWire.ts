import type { TaskRecord } from '../../engine/index.js';
import { ErrorCodes, isObject } from '../../rpc/index.js';
import {
  RELATED_TASK_META,
  ResultType,
  ttlFromCreation,
  type DetailedTask,
  type ExtTask,
} from '../../protocol/index.js';

/** The record as the extension's `Task` (flat; `ttlMs` and `pollIntervalMs`, spec §3.3). */
export function toExtTask(record: TaskRecord): ExtTask {
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    ttlMs: ttlFromCreation(record),
    ...(record.pollIntervalMs !== undefined && { pollIntervalMs: record.pollIntervalMs }),
  };
}

/**
 * The `DetailedTask` of `tasks/get` (spec E8): the variant matching the status, with every outstanding input request,
 * the inlined result, or the error.
 */
export function toDetailedTask(record: TaskRecord): DetailedTask {
  const task = toExtTask(record);
  switch (record.status) {
    case 'input_required':
      return {
        ...task,
        inputRequests: Object.fromEntries(
          Object.entries(record.inputRequests).map(([key, pending]) => [
            key,
            { method: pending.method, ...(pending.params && { params: pending.params }) },
          ]),
        ),
      };
    case 'completed':
      // The inlined result is a 2026-07-28 result like any other, so it carries its resultType too.
      return { ...task, result: { ...inlinedResult(record), resultType: ResultType.complete } };
    case 'failed':
      return { ...task, error: failure(record) };
    default:
      return task;
  }
}

/** spec E15: a completed task inlines its result, without related-task _meta (the task is the envelope). */
function inlinedResult(record: TaskRecord): Record<string, unknown> {
  const result = record.outcome?.kind === 'result' ? record.outcome.result : {};
  if (!isObject(result['_meta']) || !(RELATED_TASK_META in result['_meta'])) return result;
  const { [RELATED_TASK_META]: _related, ...meta } = result['_meta'];
  const { _meta, ...rest } = result;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}

/** spec E15: `failed` carries a JSON-RPC error; a task that failed another way (a 2025 tool error) is described. */
function failure(record: TaskRecord): { code: number; message: string; data?: unknown } {
  if (record.outcome?.kind === 'error') return { ...record.outcome.error };
  return { code: ErrorCodes.INTERNAL_ERROR, message: record.statusMessage ?? 'The task failed' };
}
