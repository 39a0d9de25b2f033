import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import { DelayedError, Worker, type Job } from 'bullmq';

import {
  INTERNAL_ERROR_CODE,
  isTerminal,
  type EngineHandle,
  type EngineLogger,
  type TaskOutcome,
  type TaskRecord,
  type TaskStore,
  type TaskSuspension,
  type TaskWork,
  type TaskWorkContext,
  type ToolConcurrency,
} from '../../engine/index.js';
import {
  DEFAULT_QUEUE_NAME,
  toConnectionOptions,
  type QueueConnection,
  type TaskJobData,
  type TaskJobResult,
} from './queueJob.js';
import { RunAdmission } from './RunAdmission.js';
import { ToolSlots } from './ToolSlots.js';

/** The engine a worker drives: the executor handle plus store reads (to decide whether a job's run is still due). */
export interface QueueWorkerEngine extends EngineHandle {
  readonly store: Pick<TaskStore, 'get'>;
}

export interface QueueWorkerOptions {
  engine: QueueWorkerEngine;
  /** The work of every task (in a worker process: `createTaskWork` on the author's server). */
  work: TaskWork;
  /** Redis for BullMQ: a URL or BullMQ connection options. */
  connection: QueueConnection;
  /** BullMQ queue name, the producers'. Default `mcp-tasks`. */
  queueName?: string;
  /** BullMQ key prefix. Default `bull`. */
  prefix?: string;
  /** Tasks this worker runs at once; a tool awaiting an input answer holds its slot. Default 16. */
  concurrency?: number;
  /** Of those, how many one owner may hold. Default: three quarters of `concurrency` (at least 1). */
  maxRunningPerOwner?: number;
  /** Tasks of one tool running at once across every worker of the queue, by tool name. */
  toolConcurrency?: ToolConcurrency;
  /** How long a job that may not start yet (owner share, tool limit) waits in the queue before it is tried again. Default 1 s. */
  deferMs?: number;
  /** Stored as the runner of the tasks this worker runs. Default: host, pid and a random suffix. */
  runnerId?: string;
  /**
   * BullMQ's job lock. It only matters before a run starts: a job whose worker died before claiming its task is
   * handed to another worker after the lock lapses and BullMQ's next stalled check. Default 30 s and 30 s.
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Times BullMQ hands a stalled job to another worker before failing it. Default 5. */
  maxStalledCount?: number;
  /** How long `close()` lets running tasks finish before handing them back. Default 30 s. */
  shutdownTimeoutMs?: number;
  logger?: EngineLogger;
}

/** The reason a run stopped without reporting an outcome. */
export class TaskRunAbortedError extends Error {
  constructor(
    message: string,
    readonly handedBack = false,
  ) {
    super(message);
    this.name = 'TaskRunAbortedError';
  }
}

type Claim =
  | { kind: 'run'; task: TaskRecord }
  | { kind: 'skip'; reason: string }
  | { kind: 'requeue'; reason: string }
  | { kind: 'defer'; reason: string };

const silent: EngineLogger = { info() {}, warn() {}, error() {} };

/**
 * The consumer side of distributed execution: a BullMQ worker that runs queued tasks with the engine of its process,
 * on the shared store.
 *
 * Who owns a run, and when:
 * - before the run starts, the job: if the worker holding it dies before claiming the task, BullMQ's stalled-job
 *   check hands the job to another worker once its lock lapses;
 * - from the claim on (`markStarted`: runner, lease, attempt count), the task's lease: this worker renews it while it
 *   runs the task, and if the worker dies, the engine's recovery (in any server or worker) re-runs the task as a new
 *   job or fails it, once the lease has lapsed.
 * A job carries the number of the run it starts; a job whose run has already started (BullMQ handed it on after the
 * claim) is skipped, so BullMQ never starts a run a second time. A running task is aborted when it is cancelled,
 * deleted or expires, and when another runner has taken it over, so it does not run twice at once.
 */
export class QueueWorker {
  readonly runnerId: string;
  readonly queueName: string;
  private readonly engine: QueueWorkerEngine;
  private readonly work: TaskWork;
  private readonly worker: Worker<TaskJobData, TaskJobResult>;
  private readonly running = new Map<string, AbortController>();
  private readonly shutdownTimeoutMs: number;
  private readonly logger: EngineLogger;
  private readonly admission: RunAdmission;
  private readonly deferMs: number;
  private leaseTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private stopping = false;
  private forced = false;

  constructor(options: QueueWorkerOptions) {
    this.engine = options.engine;
    this.work = options.work;
    this.queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
    this.runnerId = options.runnerId ?? `queue-worker:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 30_000;
    this.logger = options.logger ?? silent;
    this.deferMs = options.deferMs ?? 1000;
    const concurrency = Math.max(1, options.concurrency ?? 16);
    this.worker = new Worker<TaskJobData, TaskJobResult>(this.queueName, (job, token) => this.process(job, token), {
      connection: toConnectionOptions(options.connection),
      ...(options.prefix !== undefined && { prefix: options.prefix }),
      name: this.runnerId,
      autorun: false,
      concurrency,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
      maxStalledCount: options.maxStalledCount ?? 5,
    });
    const toolSlots = new ToolSlots(
      () => this.worker.getBackend().client,
      `${options.prefix ?? 'bull'}:${this.queueName}`,
      this.engine.leaseMs,
    );
    this.admission = new RunAdmission(
      {
        concurrency,
        ...(options.maxRunningPerOwner !== undefined && { maxRunningPerOwner: options.maxRunningPerOwner }),
        ...(options.toolConcurrency !== undefined && { toolConcurrency: options.toolConcurrency }),
      },
      toolSlots,
    );
    this.worker.on('error', (error: Error) => this.logger.warn({ error: String(error) }, 'task queue worker'));
    this.worker.on('failed', (job, error) => {
      if (job) void this.onJobFailed(job.data, error);
    });
  }

  /** Tasks this worker is running now. */
  get activeTaskIds(): string[] {
    return [...this.running.keys()];
  }

  /** Connects and starts taking jobs. */
  async start(): Promise<void> {
    await this.worker.waitUntilReady();
    this.worker
      .run()
      .catch((error: unknown) => this.logger.error({ error: String(error) }, 'task queue worker stopped'));
    // The lease is three ticks long: one failed renewal does not lose it.
    this.leaseTimer = setInterval(() => void this.tick(), Math.max(50, Math.floor(this.engine.leaseMs / 3)));
    this.leaseTimer.unref();
  }

  /**
   * Stops taking jobs and lets running tasks finish for up to `timeoutMs` (default `shutdownTimeoutMs`). Tasks still
   * running then are handed back: their work is aborted without an outcome, and once their lease lapses the engine's
   * recovery re-runs them on another worker (retry-safe) or fails them with a clear statusMessage.
   */
  close(options: { timeoutMs?: number } = {}): Promise<void> {
    this.closing ??= (async () => {
      this.stopping = true;
      const timer = setTimeout(() => this.handBackAll(), options.timeoutMs ?? this.shutdownTimeoutMs);
      try {
        await this.worker.close();
      } finally {
        clearTimeout(timer);
        clearInterval(this.leaseTimer);
      }
    })();
    return this.closing;
  }

  // ---- one job --------------------------------------------------------------------------------------------------

  private async process(job: Job<TaskJobData, TaskJobResult>, token?: string): Promise<TaskJobResult> {
    const { taskId, attempt } = job.data;
    const claim = await this.claim(taskId, attempt, job.timestamp);
    if (claim.kind === 'skip') {
      this.logger.info({ taskId, attempt, runner: this.runnerId, reason: claim.reason }, 'task job skipped');
      return { taskId, attempt, outcome: 'skipped', reason: claim.reason };
    }
    if (claim.kind === 'defer') {
      // Fair sharing: the run waits in the queue (delayed, so other jobs pass it) rather than take a slot now.
      this.logger.info({ taskId, attempt, reason: claim.reason }, 'task job deferred');
      await job.moveToDelayed(Date.now() + this.deferMs, token);
      throw new DelayedError();
    }
    if (claim.kind === 'requeue') {
      // The run has not started: give the job back to the queue rather than drop it.
      this.logger.warn({ taskId, attempt, reason: claim.reason }, 'task job handed back to the queue');
      await job.moveToDelayed(Date.now() + 1000, token);
      throw new DelayedError();
    }
    return this.run(claim.task, attempt);
  }

  /** Decides whether this job's run is still due and, if so, takes the task's lease. */
  private async claim(taskId: string, attempt: number, queuedAt: number): Promise<Claim> {
    for (let failures = 0; ; failures++) {
      if (this.stopping) return { kind: 'requeue', reason: 'the worker is shutting down' };
      try {
        const record = await this.storedTask(taskId, queuedAt);
        if (!record) return { kind: 'skip', reason: 'the task no longer exists' };
        if (isTerminal(record.status)) return { kind: 'skip', reason: `the task is already ${record.status}` };
        if (this.engine.isExpired(record, Date.now())) return { kind: 'skip', reason: 'the task has expired' };
        if (this.running.has(taskId)) return { kind: 'skip', reason: 'this worker is already running the task' };
        // Our own claim whose reply was lost: only this worker would ever renew it, so run it.
        const ours = record.attempts >= attempt;
        // Started elsewhere: from the claim on the lease decides, and recovery queues the next run if needed.
        if (ours && record.runner !== this.runnerId)
          return { kind: 'skip', reason: `run ${attempt} has already started` };
        const refusal = await this.admission.admit(record);
        if (refusal) return { kind: 'defer', reason: refusal };
        if (ours) return { kind: 'run', task: record };
        const task = await this.engine.markStarted(taskId, this.runnerId, attempt).catch(async (error: unknown) => {
          await this.admission.release(taskId).catch(() => {});
          throw error;
        });
        if (!task) {
          await this.admission.release(taskId).catch(() => {});
          return { kind: 'skip', reason: 'the task ended before it started' };
        }
        return { kind: 'run', task };
      } catch (error) {
        if (failures >= 4) return { kind: 'requeue', reason: `the task store is unavailable: ${String(error)}` };
        await sleep(100 * 2 ** failures);
      }
    }
  }

  private async run(task: TaskRecord, attempt: number): Promise<TaskJobResult> {
    const taskId = task.taskId;
    const controller = new AbortController();
    this.running.set(taskId, controller);
    // Cancellation, deletion and expiry through any instance reach the work as an abort (spec R50): the store's
    // cross-process events wake this observer, and the lease ticks re-read the task in case an event was lost.
    const stopObserving = this.engine.observe(taskId, (record) => this.check(taskId, record));
    this.recheck(taskId);
    this.logger.info({ taskId, attempt, runner: this.runnerId }, 'task started');
    const context: TaskWorkContext = {
      task,
      signal: controller.signal,
      setStatusMessage: (message) => this.engine.setStatusMessage(taskId, message),
      // The requestor's connection is on a server instance: progress travels through the store to it.
      reportProgress: (update) => this.engine.reportProgress(taskId, update),
      requestInput: async (request) => {
        const [key] = await this.engine.requestInput(taskId, [request]);
        try {
          return await this.engine.awaitInputAnswer(taskId, key as string, controller.signal);
        } finally {
          if (controller.signal.aborted) await this.engine.withdrawInput(taskId, key as string).catch(() => {});
        }
      },
      suspend: (requests, meta) => this.engine.suspend(taskId, requests, meta),
    };
    try {
      let outcome: TaskOutcome | TaskSuspension;
      let statusMessage: string | undefined;
      try {
        outcome = await this.work(context);
      } catch (error) {
        if (controller.signal.aborted) return this.aborted(task, attempt, controller.signal);
        const message = error instanceof Error ? error.message : String(error);
        outcome = { kind: 'error', error: { code: INTERNAL_ERROR_CODE, message } };
        statusMessage = `The task's work failed: ${message}`;
      }
      if (controller.signal.aborted) return this.aborted(task, attempt, controller.signal);
      if (outcome.kind === 'suspended') {
        // Parked for input without a runner; answering it queues the next run.
        this.logger.info({ taskId, attempt, runner: this.runnerId }, 'task run suspended for input');
        return { taskId, attempt, outcome: 'finished', reason: 'suspended for input' };
      }
      const finalOutcome = outcome;
      await this.report(taskId, controller.signal, () => this.engine.complete(taskId, finalOutcome, statusMessage));
      this.logger.info({ taskId, attempt, runner: this.runnerId }, 'task run finished');
      return { taskId, attempt, outcome: 'finished' };
    } finally {
      stopObserving();
      this.running.delete(taskId);
      await this.admission.release(taskId).catch((error: unknown) => {
        // The tool's run lapses with its lease.
        this.logger.warn({ taskId, error: String(error) }, 'could not release a tool concurrency slot');
      });
    }
  }

  private aborted(task: TaskRecord, attempt: number, signal: AbortSignal): TaskJobResult {
    const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
    const handedBack = signal.reason instanceof TaskRunAbortedError && signal.reason.handedBack;
    this.logger.info({ taskId: task.taskId, attempt, runner: this.runnerId, reason }, 'task run aborted');
    return { taskId: task.taskId, attempt, outcome: handedBack ? 'handed-back' : 'aborted', reason };
  }

  /** Records the outcome, retrying while the store is unreachable: the task is ours until it lands or we stop. */
  private async report(taskId: string, signal: AbortSignal, write: () => Promise<unknown>): Promise<void> {
    for (let failures = 0; ; failures++) {
      try {
        await write();
        return;
      } catch (error) {
        this.logger.warn({ taskId, error: String(error) }, 'could not record the task outcome; retrying');
        // After a hand-back or a take-over the lease, not this worker, decides what happens to the task.
        if (signal.aborted || this.forced) return;
        await sleep(Math.min(200 * 2 ** failures, 5000));
      }
    }
  }

  // ---- staying in charge ----------------------------------------------------------------------------------------

  /** Aborts the run when the task is over, gone, or no longer ours. */
  private check(taskId: string, record: TaskRecord | undefined): void {
    const controller = this.running.get(taskId);
    if (!controller || controller.signal.aborted) return;
    let reason: string | undefined;
    if (!record) reason = 'the task no longer exists';
    else if (isTerminal(record.status)) reason = `the task is ${record.status}`;
    else if (this.engine.isExpired(record, Date.now())) reason = 'the task has expired';
    // A run that suspended itself for input gave its lease up and is about to return.
    else if (record.runner !== this.runnerId && !record.suspended) reason = 'another runner has taken the task over';
    if (reason) controller.abort(new TaskRunAbortedError(reason));
  }

  private recheck(taskId: string): void {
    this.engine.store.get(taskId).then(
      (record) => this.check(taskId, record),
      () => {
        // Re-read on the next tick.
      },
    );
  }

  private async tick(): Promise<void> {
    if (this.running.size === 0) return;
    try {
      await this.engine.renewLeases(this.runnerId);
    } catch (error) {
      this.logger.warn({ runner: this.runnerId, error: String(error) }, 'lease renewal failed');
    }
    for (const taskId of this.running.keys()) this.recheck(taskId);
    await this.admission.renew().catch((error: unknown) => {
      this.logger.warn({ runner: this.runnerId, error: String(error) }, 'tool concurrency renewal failed');
    });
  }

  private handBackAll(): void {
    this.forced = true;
    for (const [taskId, controller] of this.running) {
      this.logger.warn({ taskId, runner: this.runnerId }, 'task handed back at shutdown');
      controller.abort(new TaskRunAbortedError('the worker shut down before the task finished', true));
    }
  }

  /**
   * The task of a job, waiting briefly when the job is younger than the insert grace: the job can arrive before the
   * task's insert commits. An old job without a task belongs to a create that never finished.
   */
  private async storedTask(taskId: string, queuedAt: number): Promise<TaskRecord | undefined> {
    for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
      const record = await this.engine.store.get(taskId);
      if (record || Date.now() - queuedAt > INSERT_GRACE_MS || this.stopping) return record;
      await sleep(wait);
    }
  }

  /** A job that failed in BullMQ before its run started (e.g. stalled too often) would leave its task unqueued. */
  private async onJobFailed(data: TaskJobData, error: Error): Promise<void> {
    try {
      const record = await this.engine.store.get(data.taskId);
      if (!record || isTerminal(record.status) || record.attempts >= data.attempt || record.runner !== undefined)
        return;
      await this.engine.fail(data.taskId, `The task could not be started by a worker: ${error.message}`);
    } catch (failure) {
      this.logger.error({ taskId: data.taskId, error: String(failure) }, 'could not fail a task whose job failed');
    }
  }
}

/** How long a job may wait for its task to be stored: the server queues the job just before inserting the task. */
const INSERT_GRACE_MS = 5000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
