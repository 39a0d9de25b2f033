import type { TaskRecord } from '../../engine/index.js';
import { isObject } from '../../rpc/index.js';

export const SEP_DIALECT = 'sep-1686';
/** The proposal's spellings (TASKS-SPEC §2): note the reversed domain compared with 2025-11-25. */
export const SEP_TASK_META = 'modelcontextprotocol.io/task';
export const SEP_RELATED_TASK_META = 'modelcontextprotocol.io/related-task';

/** The proposal's statuses: `submitted` before the work starts, `unknown` for a task whose run was lost. */
export type SepStatus = 'submitted' | 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled' | 'unknown';

/** `_meta["modelcontextprotocol.io/task"]` of a request, if present. */
export function sepTaskMeta(params: Record<string, unknown> | undefined): unknown {
  const meta = isObject(params?.['_meta']) ? params['_meta'] : undefined;
  return meta?.[SEP_TASK_META];
}

/** Whether a request carries the proposal's related-task key (its task requests always do, spec 4.7). */
export function carriesSepRelatedTask(params: Record<string, unknown> | undefined): boolean {
  const meta = isObject(params?.['_meta']) ? params['_meta'] : undefined;
  return meta !== undefined && SEP_RELATED_TASK_META in meta;
}

/** The id a requestor knows the task by: its own for tasks it named, the receiver's otherwise. */
export function sepTaskId(record: TaskRecord): string {
  return record.dialect === SEP_DIALECT && record.idempotencyKey !== undefined ? record.idempotencyKey : record.taskId;
}

export function sepStatus(record: TaskRecord): SepStatus {
  if (record.status === 'failed' && record.recovery === 'failed-after-crash') return 'unknown';
  // spec 4.3: a task starts `submitted` and stays so until its work begins.
  if (record.status === 'working' && record.attempts === 0) return 'submitted';
  return record.status;
}

/** The actual retention after completion (spec 4.5), or null for unlimited. */
export function keepAliveOf(record: TaskRecord): number | null {
  if (record.retention.kind === 'keepAlive') return record.retention.keepAliveMs;
  return record.expiresAt === null ? null : Math.max(0, record.expiresAt - (record.terminalAt ?? record.createdAt));
}

/** The proposal's task view, as in `tasks/get` and `tasks/list` (spec 3.2, 3.5, 7.2). */
export function toSepTask(record: TaskRecord): Record<string, unknown> {
  const status = sepStatus(record);
  const task: Record<string, unknown> = { taskId: sepTaskId(record), status, keepAlive: keepAliveOf(record) };
  if (record.pollIntervalMs !== undefined) task['pollFrequency'] = record.pollIntervalMs;
  if (status === 'failed' || status === 'unknown') {
    task['error'] =
      record.statusMessage ?? (record.outcome?.kind === 'error' ? record.outcome.error.message : 'The task failed');
  }
  return task;
}

export function relatedMeta(taskId: string): Record<string, unknown> {
  return { [SEP_RELATED_TASK_META]: { taskId } };
}
