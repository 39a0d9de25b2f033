import * as z from 'zod';

import { metaOf, isObject } from './wireObject.js';
import { RpcErrorSchema, WireTaskStatusSchema } from './wireStatus.js';

/**
 * The 2026 tasks extension `io.modelcontextprotocol/tasks` on the 2026-07-28 wire (SEP-2663, TASKS-SPEC §3): the
 * receiver decides per request whether a `tools/call` becomes a task; results are inlined in `tasks/get`.
 */
export const EXT_GENERATION = 'ext-2026';
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** The extension's identifier in `capabilities.extensions` (spec §3.2). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The per-request envelope of the 2026-07-28 wire (`_meta` keys). */
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';
/** Marks each notification of a `subscriptions/listen` stream with the listen request's id. */
export const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';

export const ExtMethod = {
  get: 'tasks/get',
  update: 'tasks/update',
  cancel: 'tasks/cancel',
  /** The status push: a full `DetailedTask` for each change (SEP-2663). */
  status: 'notifications/tasks',
  listen: 'subscriptions/listen',
  acknowledged: 'notifications/subscriptions/acknowledged',
  discover: 'server/discover',
} as const;

/** The request methods the extension defines (`tasks/result` and `tasks/list` are gone: -32601). */
export const EXT_TASK_METHODS = [ExtMethod.get, ExtMethod.update, ExtMethod.cancel] as const;
export type ExtTaskMethod = (typeof EXT_TASK_METHODS)[number];

/** The `resultType` of a 2026-07-28 result. */
export const ResultType = { complete: 'complete', task: 'task', inputRequired: 'input_required' } as const;

/** The extension's `Task` (spec §3.3): `ttlMs` and `pollIntervalMs`, flat, never wrapped. */
export const ExtTaskSchema = z.looseObject({
  taskId: z.string(),
  status: WireTaskStatusSchema,
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number().nullable(),
  pollIntervalMs: z.number().optional(),
});
export type ExtTask = z.infer<typeof ExtTaskSchema>;

/** One outstanding request for input, keyed in `inputRequests` (spec E10). */
export const InputRequestSchema = z.looseObject({ method: z.string(), params: z.looseObject({}).optional() });
export type InputRequest = z.infer<typeof InputRequestSchema>;
export const InputRequestsSchema = z.record(z.string(), InputRequestSchema);

/** `DetailedTask`: the status-matching variant, with `result`, `error` or `inputRequests` inlined (spec E8). */
export const DetailedTaskSchema = ExtTaskSchema.extend({
  result: z.looseObject({}).optional(),
  error: RpcErrorSchema.optional(),
  inputRequests: InputRequestsSchema.optional(),
});
export type DetailedTask = z.infer<typeof DetailedTaskSchema>;

/** The requestor's declared client capabilities from the per-request envelope. */
export function envelopeCapabilities(params: Record<string, unknown> | undefined): Record<string, unknown> {
  const capabilities = metaOf(params)?.[CLIENT_CAPABILITIES_META];
  return isObject(capabilities) ? capabilities : {};
}

/** Whether this request itself declares the extension in its per-request client capabilities (spec E1). */
export function declaresTasksExtension(params: Record<string, unknown> | undefined): boolean {
  const extensions = envelopeCapabilities(params)['extensions'];
  return isObject(extensions) && TASKS_EXTENSION in extensions;
}

/** The `data` of -32021 for a request that did not declare the extension (spec E14). */
export function missingTasksExtensionData(): Record<string, unknown> {
  return { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
}
