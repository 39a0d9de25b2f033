import * as z from 'zod';

import { isObject } from './wireObject.js';
import { WireTaskStatusSchema } from './wireStatus.js';

/** MCP 2025-11-25 core tasks (TASKS-SPEC §1): `params.task` on `tools/call`, `CreateTaskResult`, `tasks/*`. */
export const CORE_GENERATION = '2025-11-25';
export const CORE_PROTOCOL_VERSION = '2025-11-25';

export const CoreMethod = {
  get: 'tasks/get',
  result: 'tasks/result',
  list: 'tasks/list',
  cancel: 'tasks/cancel',
  /** spec R43: a prompt to poll; the status itself is read from `tasks/get`. */
  status: 'notifications/tasks/status',
} as const;

/** The request methods of this generation, besides task-augmented `tools/call`. */
export const CORE_TASK_METHODS = [CoreMethod.get, CoreMethod.result, CoreMethod.list, CoreMethod.cancel] as const;
export type CoreTaskMethod = (typeof CORE_TASK_METHODS)[number];

/** The `_meta` key naming the task a request, notification or result belongs to (spec R24 R37). */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** The 2025-11-25 `Task` (spec §1.5). Required fields are checked; optional ones only for type. */
export const CoreTaskSchema = z.looseObject({
  taskId: z.string(),
  status: WireTaskStatusSchema,
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttl: z.number().nullable(),
  pollInterval: z.number().optional(),
});
export type CoreTask = z.infer<typeof CoreTaskSchema>;

/** `CreateTaskResult`: the task, wrapped (spec R11). */
export const CreateTaskResultSchema = z.looseObject({ task: CoreTaskSchema });

/** The `tasks/list` result (spec §1.8). */
export const CoreTaskListSchema = z.looseObject({ tasks: z.array(CoreTaskSchema), nextCursor: z.string().optional() });

/** `{ [RELATED_TASK_META]: { taskId } }`, for a `_meta` object. */
export function coreRelatedMeta(taskId: string): Record<string, unknown> {
  return { [RELATED_TASK_META]: { taskId } };
}

/** The server `capabilities.tasks` of 2025-11-25 (spec R1). `list` only where callers can be told apart (R66). */
export function coreCapabilities(listable: boolean): Record<string, unknown> {
  return {
    ...(listable && { list: {} }),
    cancel: {},
    requests: { tools: { call: {} } },
  };
}

/** What a receiver's `capabilities.tasks` supports; capabilities are objects whose presence means support (spec A2). */
export interface CoreTaskSupport {
  toolCall: boolean;
  cancel: boolean;
  list: boolean;
}

export function coreTaskSupport(capabilities: unknown): CoreTaskSupport {
  const tasks = isObject(capabilities) && isObject(capabilities['tasks']) ? capabilities['tasks'] : {};
  const requests = isObject(tasks['requests']) ? tasks['requests'] : {};
  const tools = isObject(requests['tools']) ? requests['tools'] : {};
  return {
    toolCall: tools['call'] !== undefined,
    cancel: tasks['cancel'] !== undefined,
    list: tasks['list'] !== undefined,
  };
}

/** Adds `execution.taskSupport` to each listed tool that has a task policy (spec §1.3). */
export function withTaskSupport(
  result: Record<string, unknown>,
  supportOf: (toolName: string) => string | undefined,
): Record<string, unknown> {
  const tools = result['tools'];
  if (!Array.isArray(tools)) return result;
  return {
    ...result,
    tools: tools.map((tool: unknown) => {
      if (!tool || typeof tool !== 'object') return tool;
      const named = tool as { name?: unknown; execution?: Record<string, unknown> };
      const support = typeof named.name === 'string' ? supportOf(named.name) : undefined;
      if (support === undefined) return tool;
      return { ...named, execution: { ...named.execution, taskSupport: support } };
    }),
  };
}
