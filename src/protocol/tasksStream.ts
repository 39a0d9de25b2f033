import * as z from 'zod';

/**
 * SEP-2694 (draft): resumable per-task event streams (EVENTS-SPEC §17). `tasks/stream { taskId, after? }` answers on
 * its own response stream with each event of the task's log as `notifications/tasks/event`, in `seq` order, then an
 * empty result once the task has ended and its events are delivered.
 */
export const TasksStreamMethod = 'tasks/stream';
export const TaskEventNotificationMethod = 'notifications/tasks/event';

/** spec TE9: `after` is a non-negative integer (exclusive); anything else is -32602. */
export const TasksStreamParamsSchema = z.looseObject({
  taskId: z.string().min(1),
  after: z.number().int().min(0).optional(),
});
export type TasksStreamParams = z.infer<typeof TasksStreamParamsSchema>;

/** The params of one `notifications/tasks/event` (spec TE2–TE4). */
export interface TaskEventNotificationParams {
  /** Per task, from 0, each exactly one more than the one before. */
  seq: number;
  taskId: string;
  /** Vendor-prefixed event type. */
  type: string;
  /** A JSON object. */
  payload: Record<string, unknown>;
  _meta: Record<string, unknown>;
}
