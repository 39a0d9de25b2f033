import { Queue, type ConnectionOptions, type KeepJobs } from 'bullmq';

import {
  ExecutorUnavailableError,
  type EngineHandle,
  type EngineLogger,
  type Executor,
  type QueueStats,
  type SubmitContext,
  type TaskRecord,
  type TaskStore,
  type WakeEntry,
} from '../../engine/index.js';
import {
  DEFAULT_QUEUE_NAME,
  JOB_RECORD_MAX_BYTES,
  TASK_JOB_NAME,
  taskJobId,
  toConnectionOptions,
  WAKE_JOB_NAME,
  wakeJobId,
  type QueueConnection,
  type QueueJobData,
  type QueueJobName,
  type QueueJobResult,
} from './queueJob.js';

export interface QueueExecutorOptions {
  /** The engine whose tasks are queued; a task that cannot be queued is failed through it. */
  engine: Pick<EngineHandle, 'fail'>;
  /**
   * The task store, for fair ordering across owners: a task is queued with a BullMQ priority of one more than its
   * owner's unfinished tasks, so each owner's next task goes ahead of other owners' backlogs (round-robin across
   * owners). Without it jobs are taken in the order they were queued.
   */
  store?: Pick<TaskStore, 'countActive'>;
  /** Redis for BullMQ: a URL or BullMQ connection options. */
  connection: QueueConnection;
  /** BullMQ queue name; producers and workers of one deployment share it. Default `mcp-tasks`. */
  queueName?: string;
  /** BullMQ key prefix. Default `bull`. */
  prefix?: string;
  /** How long `submit` waits for Redis to take a job before it gives up and fails the task. Default 10 s. */
  enqueueTimeoutMs?: number;
  /** Finished jobs kept for inspection (the task store, not the queue, holds outcomes). */
  keepCompleted?: KeepJobs;
  keepFailed?: KeepJobs;
  logger?: EngineLogger;
}

/** The error `submit` rejects with when Redis did not take the job; the task has been failed by then. */
export class QueueUnavailableError extends ExecutorUnavailableError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QueueUnavailableError';
  }
}

/**
 * The producer side of distributed execution: each run of a task becomes a BullMQ job `{ taskId, attempt }` that a
 * {@link QueueWorker} in any process picks up. Tasks are created without a lease (`leasesOnCreate = false`): a task
 * waiting in the queue belongs to no runner, so a long queue never looks like a dead runner; the worker that starts
 * it takes the lease.
 */
export class QueueExecutor implements Executor {
  readonly runnerId: string;
  readonly leasesOnCreate = false;
  readonly queueName: string;
  readonly queue: Queue<QueueJobData, QueueJobResult, QueueJobName>;
  private readonly engine: Pick<EngineHandle, 'fail'>;
  private readonly store: Pick<TaskStore, 'countActive'> | undefined;
  private readonly enqueueTimeoutMs: number;
  private readonly logger: EngineLogger | undefined;
  private closed = false;

  constructor(options: QueueExecutorOptions) {
    this.engine = options.engine;
    this.store = options.store;
    this.queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
    this.runnerId = `queue:${this.queueName}`;
    this.enqueueTimeoutMs = options.enqueueTimeoutMs ?? 10_000;
    this.logger = options.logger;
    const connection: ConnectionOptions = toConnectionOptions(options.connection);
    this.queue = new Queue<QueueJobData, QueueJobResult, QueueJobName>(this.queueName, {
      connection,
      ...(options.prefix !== undefined && { prefix: options.prefix }),
      defaultJobOptions: {
        // A job is one run; re-runs after a lost worker are new jobs made by the engine's recovery.
        attempts: 1,
        removeOnComplete: options.keepCompleted ?? { age: 3600, count: 10_000 },
        removeOnFail: options.keepFailed ?? { age: 7 * 24 * 3600, count: 10_000 },
      },
    });
    // ioredis reconnects by itself; unhandled, its connection errors would be reported as unhandled events.
    this.queue.on('error', (error: Error) => this.logger?.warn({ error: String(error) }, 'task queue connection'));
  }

  /**
   * Queues the task's next run. Resolves once Redis holds the job, so a CreateTaskResult is only sent for a task a
   * worker will find (spec E4). If Redis does not take it in time the task is failed, never left `working` unqueued.
   */
  async submit(task: TaskRecord, known: SubmitContext = {}): Promise<void> {
    const attempt = task.attempts + 1;
    try {
      if (this.closed) throw new Error('the queue executor is closed');
      const priority = await this.priorityOf(task, known.ownerActive);
      await withTimeout(
        this.queue.add(
          TASK_JOB_NAME,
          { taskId: task.taskId, attempt, ...(carried(task) && { record: task }) },
          { jobId: taskJobId(task.taskId, attempt), ...(priority !== undefined && { priority }) },
        ),
        this.enqueueTimeoutMs,
        `Redis did not take the job within ${this.enqueueTimeoutMs} ms`,
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const message = `The task could not be queued for a worker: ${reason}`;
      this.logger?.error({ taskId: task.taskId, attempt, error: reason }, 'task could not be queued');
      // spec R61: a clear statusMessage; a late add that lands anyway finds the task terminal and is skipped.
      await this.engine.fail(task.taskId, message).catch(() => {});
      throw new QueueUnavailableError(message, { cause: error });
    }
  }

  /**
   * A parked task's durable timer as a delayed job due at `wakeAt`: whichever worker takes it then wakes the task
   * through the engine, which resumes it only if it is still parked until that time (a duplicate, late or stale
   * timer changes nothing; an early one is put back). The engine's wake-at index poll stays as a safety net.
   */
  async scheduleWake(entry: WakeEntry): Promise<void> {
    if (this.closed) throw new Error('the queue executor is closed');
    const { taskId, wakeAt } = entry;
    await withTimeout(
      this.queue.add(
        WAKE_JOB_NAME,
        { taskId, wakeAt },
        { jobId: wakeJobId(taskId, wakeAt), delay: Math.max(0, wakeAt - Date.now()) },
      ),
      this.enqueueTimeoutMs,
      `Redis did not take the timer within ${this.enqueueTimeoutMs} ms`,
    );
  }

  /** BullMQ's job counts (prioritized jobs wait too) and the workers connected to the queue now. */
  async queueStats(): Promise<QueueStats> {
    const [counts, workers] = await Promise.all([
      this.queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed'),
      this.queue.getWorkers(),
    ]);
    return {
      waiting: (counts['waiting'] ?? 0) + (counts['prioritized'] ?? 0),
      active: counts['active'] ?? 0,
      delayed: counts['delayed'] ?? 0,
      workers: workers.map((worker) => ({
        name: worker['name'] ?? worker['id'] ?? 'worker',
        ...(worker['addr'] !== undefined && { addr: worker['addr'] }),
        ...(worker['age'] !== undefined && { age: Number(worker['age']) }),
      })),
    };
  }

  /**
   * The owner's k-th unfinished task gets priority k (1 is taken first, FIFO within a priority), so jobs start
   * round-robin across owners however long one owner's backlog is. A creation hands over the count it read before
   * storing the task; a re-submitted task (recovery, a resumed or woken one) is already stored and active, so the
   * count read here includes it: priority k + 1, one place later, which only affects order.
   */
  private async priorityOf(task: TaskRecord, ownerActive: number | undefined): Promise<number | undefined> {
    if (!this.store) return undefined;
    try {
      return Math.min(MAX_PRIORITY, 1 + (ownerActive ?? (await this.store.countActive(task.owner))));
    } catch {
      return undefined; // ordering only; the insert that follows reports a store failure
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.close();
  }
}

/** Whether a job carries its task: a small one (its worker then claims it without a read first). */
function carried(task: TaskRecord): boolean {
  return Buffer.byteLength(JSON.stringify(task)) <= JOB_RECORD_MAX_BYTES;
}

/** BullMQ's largest priority. */
const MAX_PRIORITY = 2 ** 21;

function withTimeout<T>(operation: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([operation, timeout]).finally(() => clearTimeout(timer));
}
