/**
 * Wakes waiters when a task changes. Events only wake: the store is the truth, so a lost event may delay a waiter
 * by at most the engine's re-check interval, never leave it stuck.
 */
export interface TaskEventBus {
  publish(taskId: string): void | Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(taskId: string, listener: () => void): () => void;
  close(): Promise<void>;
}

/** In-process bus: one listener set per task id, so a publish costs what its own waiters cost. */
export class LocalEventBus implements TaskEventBus {
  private readonly listeners = new Map<string, Set<() => void>>();

  publish(taskId: string): void {
    const set = this.listeners.get(taskId);
    if (!set) return;
    for (const listener of [...set]) listener();
  }

  subscribe(taskId: string, listener: () => void): () => void {
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
}
