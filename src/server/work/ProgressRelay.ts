import { isTerminal, type TaskEngine, type TaskRecord } from '../../engine/index.js';

/** Sends one progress notification to the requestor; false when its connection is gone. */
export type ProgressSink = (task: TaskRecord, params: Record<string, unknown>) => boolean;

/**
 * Relays the progress that work running in another process (a queue worker) stores on its task to the requestor's
 * connection in this process (spec R55): the original token, in order (a report older than the last one sent is
 * skipped), until the task ends (spec R56) or the connection closes. The store's events wake it from any process;
 * the worker writes at most one report per 250 ms per task, the latest winning, so the bus carries no flood.
 */
export class ProgressRelay {
  private readonly watches = new Map<string, { connectionId: string; stop: () => void }>();

  constructor(
    private readonly engine: Pick<TaskEngine, 'observe'>,
    private readonly sink: ProgressSink,
  ) {}

  /** Starts relaying for a task just created on `connectionId` with a progress token. */
  watch(task: TaskRecord, connectionId: string): void {
    if (task.progressToken === undefined || this.watches.has(task.taskId)) return;
    const token = task.progressToken;
    let lastSeq = task.progress?.seq ?? 0;
    let lastVersion = task.version;
    const stop = this.engine.observe(task.taskId, (record) => {
      if (!record || isTerminal(record.status)) return this.unwatch(task.taskId);
      // Reads after events may resolve out of order: one older than a read already handled says nothing new.
      if (record.version < lastVersion) return;
      lastVersion = record.version;
      const progress = record.progress;
      if (!progress || progress.seq <= lastSeq) return;
      lastSeq = progress.seq;
      const params: Record<string, unknown> = { progressToken: token, progress: progress.progress };
      if (progress.total !== undefined) params['total'] = progress.total;
      if (progress.message !== undefined) params['message'] = progress.message;
      if (!this.sink(record, params)) this.unwatch(task.taskId);
    });
    this.watches.set(task.taskId, { connectionId, stop });
  }

  /** Stops relaying to a connection that closed. */
  dropConnection(connectionId: string): void {
    for (const [taskId, entry] of this.watches) if (entry.connectionId === connectionId) this.unwatch(taskId);
  }

  /** Tasks being relayed now (for tests and metrics). */
  get size(): number {
    return this.watches.size;
  }

  close(): void {
    for (const taskId of [...this.watches.keys()]) this.unwatch(taskId);
  }

  private unwatch(taskId: string): void {
    this.watches.get(taskId)?.stop();
    this.watches.delete(taskId);
  }
}
