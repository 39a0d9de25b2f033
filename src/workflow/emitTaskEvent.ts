import { WORKFLOW_RUN_META } from './journaledWork.js';
import { WorkflowRun } from './WorkflowRun.js';

/** The part of a tool handler's context (the SDK's `ServerContext`) that finds the task run it belongs to. */
export interface TaskEventContext {
  mcpReq: { _meta?: Record<string, unknown> | undefined };
}

/**
 * Emits an intermediate result from an ordinary tool handler run as a task: an event of a registered type (data valid
 * per its payloadSchema) appended to the task's event log, which its subscribers receive (poll, push, webhooks).
 * `key` makes it idempotent: a re-run of the task (after a crash) stores nothing new for a key it emitted before.
 * Returns the event's `seq` in the task's log, or undefined for a call that is not a task run (nothing is stored).
 * Throws TaskEventRejectedError for an unknown type, invalid data, an event over `maxEventBytes`, or a log full at
 * `eventsPerTask`.
 */
export async function emitTaskEvent(
  ctx: TaskEventContext,
  type: string,
  data: Record<string, unknown>,
  options: { key?: string } = {},
): Promise<number | undefined> {
  const run = WorkflowRun.find(ctx.mcpReq._meta?.[WORKFLOW_RUN_META]);
  if (!run) return undefined;
  return run.emit(type, data, options.key === undefined ? undefined : `tool:${options.key}`);
}
