import type { TaskEventBus } from '../contracts/TaskEventBus.js';

/**
 * A task's events heard from a moment on, kept as the newest version they named. Begun before a read of the task, it
 * tells whether anything changed after that read, so what follows the read (a claimed run, a wait for the next
 * change) need not read the task again to close the gap before it subscribes itself.
 */
export interface TaskWatch {
  /** Whether a change past `version` was heard, or an event that does not say which version it made. */
  heardPast(version: number): boolean;
  /** Stops listening; idempotent. */
  stop(): void;
}

export function watchTask(events: Pick<TaskEventBus, 'subscribe'>, taskId: string): TaskWatch {
  let newest = -1;
  let unknown = false;
  const unsubscribe = events.subscribe(taskId, (change) => {
    if (!change) unknown = true;
    else newest = Math.max(newest, change.version);
  });
  return { heardPast: (version) => unknown || newest > version, stop: unsubscribe };
}
