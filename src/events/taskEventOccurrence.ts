import type { LoggedEvent, TaskRecord } from '../engine/index.js';
import { RELATED_TASK_META, type EventOccurrence } from '../protocol/index.js';
import type { WebhookEvent } from './webhooks/WebhookDeliveries.js';
import { encodeTaskEventCursor } from './taskEventCursor.js';

/**
 * An entry of a task's log as the wire's EventOccurrence (spec V20). The id derives from `(taskId, seq)`, so poll, push
 * and webhook agree on it and a receiver dedups across them (spec V22).
 */
export function taskEventOccurrence(taskId: string, event: LoggedEvent): EventOccurrence {
  return {
    eventId: `${taskId}:${event.seq}`,
    name: event.type,
    timestamp: new Date(event.at).toISOString(),
    data: event.data,
    _meta: { [RELATED_TASK_META]: { taskId } },
  };
}

/** The cursor after `event`: where a subscriber resumes once it has processed it. */
export function cursorAfter(taskId: string, event: LoggedEvent): string {
  return encodeTaskEventCursor(taskId, event.seq + 1);
}

/**
 * An appended entry as webhook delivery publishes it: only the task's owner receives it, scoped to the task (the
 * hook for `WebhookDeliveries.publish`, called from `TaskEngine.onEventAppended` in the appending process).
 */
export function webhookEventOf(task: TaskRecord, event: LoggedEvent): WebhookEvent {
  return {
    occurrence: taskEventOccurrence(task.taskId, event),
    owner: task.owner,
    scope: task.taskId,
    cursor: cursorAfter(task.taskId, event),
  };
}
