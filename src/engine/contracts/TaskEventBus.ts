import { decodeTaskEvent, taskIdOfEvent } from '../record/taskEventPayload.js';
import type { TaskChange } from '../record/TaskChange.js';

export type TaskEventListener = (change?: TaskChange) => void;

/**
 * Wakes waiters when a task changes. Events only wake: the store is the truth, so a lost event may delay a waiter
 * by at most the engine's re-check interval, never leave it stuck.
 */
export interface TaskEventBus {
  publish(taskId: string, change?: TaskChange): void | Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(taskId: string, listener: TaskEventListener): () => void;
  close(): Promise<void>;
}

/**
 * In-process bus: one listener set per task id, so a publish costs what its own waiters cost. The cross-process buses
 * use one for their local fan-out.
 */
export class LocalEventBus implements TaskEventBus {
  private readonly listeners = new Map<string, Set<TaskEventListener>>();

  /** `onListenerError` sees what a throwing listener threw; the other listeners still run. */
  constructor(private readonly onListenerError?: (error: unknown) => void) {}

  publish(taskId: string, change?: TaskChange): void {
    // A record is handed on only from a message (a copy of its own): in process it is the writer's object.
    if (change?.record) {
      const { record: _record, ...bare } = change;
      change = bare;
    }
    this.deliver(taskId, change);
  }

  /** Delivers a message a cross-process bus received (see encodeTaskEvent) to the task's subscribers here. */
  dispatch(payload: string): void {
    // Most messages concern tasks nobody here waits for: those are not decoded.
    const id = taskIdOfEvent(payload);
    if (id !== undefined && !this.listeners.has(id)) return;
    const { taskId, change } = decodeTaskEvent(payload);
    this.deliver(taskId, change);
  }

  private deliver(taskId: string, change?: TaskChange): void {
    const set = this.listeners.get(taskId);
    if (!set) return;
    for (const listener of [...set]) this.call(listener, change);
  }

  /** Wakes every waiter: after a cross-process bus reconnects, events may have been lost while it was down. */
  publishAll(): void {
    for (const set of [...this.listeners.values()]) for (const listener of [...set]) this.call(listener);
  }

  subscribe(taskId: string, listener: TaskEventListener): () => void {
    let set = this.listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.listeners.set(taskId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(taskId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(taskId);
    };
  }

  /** Number of task ids with at least one waiter (for tests and metrics). */
  get size(): number {
    return this.listeners.size;
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  private call(listener: TaskEventListener, change?: TaskChange): void {
    try {
      listener(change);
    } catch (error) {
      this.onListenerError?.(error);
    }
  }
}
