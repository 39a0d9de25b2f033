import { randomUUID } from 'node:crypto';

import {
  isTerminal,
  type EngineHandle,
  type Executor,
  type TaskRecord,
  type TaskWork,
  type TaskWorkContext,
} from '../../engine/index.js';

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

  private async run(taskId: string, controller: AbortController): Promise<void> {
    const task = await this.engine.markStarted(taskId, this.runnerId);
    if (!task || controller.signal.aborted) return;
    // Cancellation, deletion and expiry reach the work as an abort (spec R50).
    const stopObserving = this.engine.observe(taskId, (record) => {
      if (!record || isTerminal(record.status) || this.engine.isExpired(record, Date.now())) {
        controller.abort(new Error(record ? `Task is ${record.status}` : 'Task no longer exists'));
      }
    });
    const context: TaskWorkContext = {
      task,
      signal: controller.signal,
      setStatusMessage: (message) => this.engine.setStatusMessage(taskId, message),
      requestInput: async (request) => {
        const [key] = await this.engine.requestInput(taskId, [request]);
        try {
          return await this.engine.awaitInputAnswer(taskId, key as string, controller.signal);
        } finally {
          if (controller.signal.aborted) await this.engine.withdrawInput(taskId, key as string).catch(() => {});
        }
      },
    };
    try {
      const outcome = await this.work(context);
      if (!controller.signal.aborted) await this.engine.complete(taskId, outcome);
    } catch (error) {
      if (controller.signal.aborted) return;
      const message = error instanceof Error ? error.message : String(error);
      await this.engine.fail(taskId, `The task's work failed: ${message}`, { code: -32603, message });
    } finally {
      stopObserving();
    }
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
