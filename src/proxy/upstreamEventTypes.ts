import * as z from 'zod';

import { TaskNotSupportedError, type TaskClient } from '../client/index.js';
import { TASK_PROGRESS_EVENT, TASK_STATUS_EVENT, type EngineLogger } from '../engine/index.js';
import type { McpTasksOptions } from '../server/index.js';
import { EVENT_SOURCE_TOOLS_META, isObject, type EventDescriptor } from '../protocol/index.js';

/** An event type as the proxy registers it in its own catalog. */
export type ProxiedEventType = NonNullable<NonNullable<McpTasksOptions['events']>['types']>[number];

/** Pages of the upstream's `events/list` read (as for its `tools/list`). */
const MAX_PAGES = 100;

/** The proxy records its tasks' status and progress itself; the upstream's entries of these types stay upstream. */
const OWN_TYPES: ReadonlySet<string> = new Set([TASK_STATUS_EVENT, TASK_PROGRESS_EVENT]);

/**
 * The upstream's event types the proxy passes through (docs/proxy.md, "Events"): those an upstream task can name as
 * its event source, task-scoped ones (arguments `{ taskId }` and nothing else required), registered in the proxy under
 * the same name and payloadSchema, `{ taskId }` then meaning the proxy's task. Not passed through: types tied to no
 * task (nothing maps their subscriptions to a task of the proxy), the runtime's own status and progress types (the
 * proxy records its own), and a payloadSchema the proxy cannot compile. An upstream without Events has none; a failed
 * listing is logged and passes none, so the proxy still serves the tools.
 */
export async function upstreamEventTypes(
  client: TaskClient,
  logger: EngineLogger,
  learned: ReadonlyMap<string, string> = new Map(),
): Promise<ProxiedEventType[]> {
  let events;
  try {
    events = client.events();
  } catch (error) {
    if (error instanceof TaskNotSupportedError) return [];
    throw error;
  }
  const descriptors: EventDescriptor[] = [];
  try {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const listed = await events.list(cursor);
      descriptors.push(...listed.events);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
  } catch (error) {
    logger.warn({ error: String(error) }, "proxy: the upstream's events/list failed; no event type is passed through");
    return [];
  }
  const passed: ProxiedEventType[] = [];
  for (const descriptor of descriptors) {
    const why = refusal(descriptor, passed);
    if (why) {
      logger.info({ eventType: descriptor.name, reason: why }, 'proxy: upstream event type not passed through');
      continue;
    }
    const hint = descriptor._meta?.[EVENT_SOURCE_TOOLS_META];
    const meta = descriptor._meta && withoutHint(descriptor._meta);
    const name = descriptor.name;
    // Without the hint, a tool names the type once one of its upstream tasks did (learned by the proxy's work).
    const tools = Array.isArray(hint)
      ? hint.filter((tool): tool is string => typeof tool === 'string')
      : (tool: string) => learned.get(tool) === name;
    passed.push({
      name,
      description: descriptor.description,
      payloadSchema: descriptor.payloadSchema,
      tools,
      ...(meta && { _meta: meta }),
    });
  }
  return passed;
}

/** Why a type is not passed through, or undefined. */
function refusal(descriptor: EventDescriptor, passed: readonly ProxiedEventType[]): string | undefined {
  if (OWN_TYPES.has(descriptor.name)) return "the proxy's own type of that name records its tasks' status or progress";
  if (passed.some((type) => type.name === descriptor.name)) return 'listed twice';
  if (!isTaskScoped(descriptor.inputSchema)) return 'not task-scoped (its arguments are not just { taskId })';
  try {
    z.fromJSONSchema(descriptor.payloadSchema as never);
  } catch (error) {
    return `its payloadSchema cannot be compiled: ${String(error)}`;
  }
  return undefined;
}

/** Arguments `{ taskId: string }`: `taskId` required, nothing else required. */
function isTaskScoped(schema: Record<string, unknown>): boolean {
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const taskId = properties['taskId'];
  const required = Array.isArray(schema['required']) ? schema['required'] : [];
  return (
    isObject(taskId) &&
    (taskId['type'] === undefined || taskId['type'] === 'string') &&
    required.includes('taskId') &&
    required.every((name) => name === 'taskId')
  );
}

/** The catalog writes the hint from `tools` again: kept once. */
function withoutHint(meta: Record<string, unknown>): Record<string, unknown> | undefined {
  const { [EVENT_SOURCE_TOOLS_META]: _hint, ...rest } = meta;
  return Object.keys(rest).length > 0 ? rest : undefined;
}
