import { randomUUID } from 'node:crypto';

import { executeTask, type EngineHandle, type Executor, type TaskRecord, type TaskWork } from '../../engine/index.js';

export interface InProcessExecutorOptions {
  engine: EngineHandle;
  work: TaskWork;
  /** Tasks running at once; further tasks wait in order. Default 16. */
  concurrency?: number;
  runnerId?: string;
}

/** Shutdown reason given to work still running when the executor closes. */
export class ExecutorClosedError extends Error {
  constructor() {
    super('The executor is shutting down');
  }
}

/**
 * Runs tasks in this process with an AbortSignal each and a concurrency limit. It renews its leases while it holds
 * tasks, so if the process dies the engine's recovery notices within one lease.
 */
export class InProcessExecutor implements Executor {
  readonly runnerId: string;
  readonly leasesOnCreate = true;
  private readonly engine: EngineHandle;
  private readonly work: TaskWork;
  private readonly concurrency: number;
  private readonly waiting: string[] = [];
  private readonly running = new Map<string, AbortController>();
  private readonly finished = new Set<Promise<void>>();
  private leaseTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(options: InProcessExecutorOptions) {
    this.engine = options.engine;
    this.work = options.work;
    this.concurrency = Math.max(1, options.concurrency ?? 16);
    this.runnerId = options.runnerId ?? `in-process:${randomUUID()}`;
  }

  get activeCount(): number {
    return this.running.size;
  }

  get queuedCount(): number {
    return this.waiting.length;
  }

  async submit(task: TaskRecord): Promise<void> {
    if (this.closed) throw new ExecutorClosedError();
    this.waiting.push(task.taskId);
    this.ensureLeaseTimer();
    this.pump();
  }

  /** Aborts running work and stops; tasks it held are recovered by the engine once their leases lapse. */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.length = 0;
    for (const controller of this.running.values()) controller.abort(new ExecutorClosedError());
    await Promise.allSettled([...this.finished]);
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.leaseTimer = undefined;
  }

  private pump(): void {
    while (!this.closed && this.running.size < this.concurrency && this.waiting.length > 0) {
      const taskId = this.waiting.shift() as string;
      const controller = new AbortController();
      this.running.set(taskId, controller);
      const done = this.run(taskId, controller).finally(() => {
        this.running.delete(taskId);
        this.finished.delete(done);
        this.pump();
      });
      this.finished.add(done);
    }
  }

  private run(taskId: string, controller: AbortController): Promise<void> {
    return executeTask(this.engine, taskId, this.runnerId, this.work, controller);
  }

  private ensureLeaseTimer(): void {
    if (this.leaseTimer) return;
    this.leaseTimer = setInterval(
      () => {
        if (this.running.size === 0 && this.waiting.length === 0) return;
        this.engine.renewLeases(this.runnerId).catch(() => {
          // A failed renewal is retried on the next tick; the lease is three ticks long.
        });
      },
      Math.max(50, Math.floor(this.engine.leaseMs / 3)),
    );
    this.leaseTimer.unref();
  }
}
