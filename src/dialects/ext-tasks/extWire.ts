import type { TaskRecord } from '../../engine/index.js';
import { isObject } from '../../rpc/index.js';

export const EXT_DIALECT = 'ext-tasks';
/** The extension's identifier in `capabilities.extensions` (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** Whether this request itself declares the extension in its per-request client capabilities (spec E1). */
export function declaresTasksExtension(params: Record<string, unknown> | undefined): boolean {
  const meta = isObject(params?.['_meta']) ? params['_meta'] : undefined;
  const capabilities = isObject(meta?.[CLIENT_CAPABILITIES_META]) ? meta[CLIENT_CAPABILITIES_META] : undefined;
  const extensions = isObject(capabilities?.['extensions']) ? capabilities['extensions'] : undefined;
  return extensions !== undefined && TASKS_EXTENSION in extensions;
}

/** The requestor's declared client capabilities from the per-request envelope. */
export function envelopeCapabilities(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const meta = isObject(params?.['_meta']) ? params['_meta'] : undefined;
  return isObject(meta?.[CLIENT_CAPABILITIES_META]) ? meta[CLIENT_CAPABILITIES_META] : {};
}

function actualTtlMs(record: TaskRecord): number | null {
  if (record.expiresAt !== null) return record.expiresAt - record.createdAt;
  return record.retention.kind === 'ttl' ? record.retention.ttlMs : null;
}

/** The extension's `Task` (flat; `ttlMs` and `pollIntervalMs`, spec §3.3). */
export function toExtTask(record: TaskRecord): Record<string, unknown> {
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    ttlMs: actualTtlMs(record),
    ...(record.pollIntervalMs !== undefined && { pollIntervalMs: record.pollIntervalMs }),
  };
}

/**
 * The `DetailedTask` of `tasks/get` (spec E8): the variant matching the status, with every outstanding input request,
 * the inlined result, or the error.
 */
export function toDetailedTask(record: TaskRecord): Record<string, unknown> {
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
      return { ...task, result: { ...inlinedResult(record), resultType: 'complete' } };
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
function failure(record: TaskRecord): Record<string, unknown> {
  if (record.outcome?.kind === 'error') return { ...record.outcome.error };
  return { code: -32603, message: record.statusMessage ?? 'The task failed' };
}
