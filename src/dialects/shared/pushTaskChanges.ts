import { isTerminal, type TaskChange, type TaskEngine, type TaskRecord } from '../../engine/index.js';

/** What a generation pushes about a task, and what counts as a change worth pushing. */
export interface TaskPushView {
  /** The notification's method (`notifications/tasks/status`, `notifications/tasks`). */
  readonly method: string;
  /** A push happens when this changes (the status alone, or the whole view). */
  key(record: TaskRecord): string;
  params(record: TaskRecord): Record<string, unknown>;
  /** `key` is the record's status: a change that says its status tells, without a read, whether the key moved. */
  readonly keyIsStatus?: boolean;
}

/**
 * The one status push: sends a task's view to one subscriber each time its key changes, until the task ends (its
 * terminal view is the last push) or is gone; then `onEnd` runs. `lastKey` is what the subscriber has already seen.
 * Returns the function that stops it early.
 */
export function pushTaskChanges(
  engine: Pick<TaskEngine, 'observe'>,
  taskId: string,
  view: TaskPushView,
  send: (method: string, params: Record<string, unknown>) => void,
  options: {
    lastKey?: string;
    onEnd?: () => void;
    /**
     * Whether the subscriber hears pushes now. While it does not, changes are not read (nothing would be sent), and
     * the push still ends with the task; once it does, the next change is pushed against what it saw last.
     */
    listening?: () => boolean;
  } = {},
): () => void {
  let lastKey = options.lastKey;
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    stop();
    options.onEnd?.();
  };
  // Changes that could not move the key are not read: the waiter's store read is most of a push's cost.
  const wants = (change: TaskChange): boolean => {
    if (options.listening?.() === false) {
      if (isTerminal(change.status)) queueMicrotask(end);
      return false;
    }
    return !view.keyIsStatus || change.status !== lastKey || isTerminal(change.status);
  };
  const stop = engine.observe(
    taskId,
    (record) => {
      if (!record) return end();
      const key = view.key(record);
      if (key !== lastKey && options.listening?.() !== false) {
        lastKey = key;
        send(view.method, view.params(record));
      }
      if (isTerminal(record.status)) end();
    },
    wants,
  );
  return () => {
    ended = true;
    stop();
  };
}
