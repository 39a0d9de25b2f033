import { WorkflowRun } from './WorkflowRun.js';

/**
 * A tool handler's context (the SDK's `ServerContext`). The task run is the one whose work called the handler
 * (`WorkflowRun.current()`); the context names the call being emitted from.
 */
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
  _ctx: TaskEventContext,
  type: string,
  data: Record<string, unknown>,
  options: { key?: string } = {},
): Promise<number | undefined> {
  const run = WorkflowRun.current();
  if (!run) return undefined;
  return run.emit(type, data, options.key === undefined ? undefined : `tool:${options.key}`);
}
