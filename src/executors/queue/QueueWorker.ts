import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

import { DelayedError, Worker, type Job } from 'bullmq';

import {
  CREATE_WAIT_MS,
  isTerminal,
  STORE_WAIT_MS,
  TaskRunner,
  type TaskWatch,
  type EngineHandle,
  type EngineLogger,
  type TaskRecord,
  type TaskWork,
  type ToolConcurrency,
} from '../../engine/index.js';
import {
  DEFAULT_QUEUE_NAME,
  toConnectionOptions,
  WAKE_JOB_NAME,
  type QueueConnection,
  type QueueJobData,
  type QueueJobResult,
  type TaskJobData,
  type TaskJobResult,
  type WakeJobData,
  type WakeJobResult,
} from './queueJob.js';
import { FleetSlots } from './FleetSlots.js';
import { RunAdmission } from './RunAdmission.js';

/** The engine a worker drives: the executor handle (its store reads decide whether a job's run is still due). */
export type QueueWorkerEngine = EngineHandle;

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
  /**
   * How many tasks one owner may run at once across every worker of the queue (counted in its Redis). Default: three
   * quarters of the slots of the live workers together (at least 1), so other owners' tasks always find a slot.
   */
  maxRunningPerOwner?: number;
  /** Tasks of one tool running at once across every worker of the queue, by tool name. */
  toolConcurrency?: ToolConcurrency;
  /** How long a job that may not start yet (owner share, tool limit) waits in the queue before it is tried again. Default 1 s. */
  deferMs?: number;
  /** Stored as the runner of the tasks this worker runs. Default: host, pid and a random suffix. */
  runnerId?: string;
  /**
   * BullMQ's job lock (renewed every half of it) and stalled-job check. They only matter before a run starts: a job
   * whose worker died before claiming its task is handed to another worker after the lock lapses and BullMQ's next
   * stalled check, within 9 s with the defaults, 6 s and 3 s.
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Times BullMQ hands a stalled job to another worker before failing it. Default 5. */
  maxStalledCount?: number;
  /**
   * How long an idle worker waits for a job before it looks again (BullMQ's `drainDelay`, 5 s there). BullMQ tells
   * one worker when the next delayed job (a durable timer, a deferred run) is due; should that worker die, the others
   * find the job at their next look, so this bounds how late it starts. Default 1 s.
   */
  drainDelayMs?: number;
  /** How long `close()` lets running tasks finish before handing them back. Default 30 s. */
  shutdownTimeoutMs?: number;
  logger?: EngineLogger;
}

/** What a job found when it tried to take its task: run it, or why not. */
type JobClaim =
  | { kind: 'run'; task: TaskRecord }
  | { kind: 'skip'; reason: string }
  | { kind: 'requeue'; reason: string; delayMs?: number }
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
 * claim) is skipped, so BullMQ never starts a run a second time. The claimed run goes through the engine's run path
 * (TaskRunner), which aborts it when the task is cancelled, deleted or expires, and when another runner has taken it
 * over, so it does not run twice at once.
 */
export class QueueWorker {
  readonly runnerId: string;
  readonly queueName: string;
  private readonly engine: QueueWorkerEngine;
  private readonly worker: Worker<QueueJobData, QueueJobResult>;
  private readonly runner: TaskRunner;
  private readonly shutdownTimeoutMs: number;
  private readonly logger: EngineLogger;
  private readonly admission: RunAdmission;
  private readonly fleet: FleetSlots;
  private readonly concurrency: number;
  private registration: NodeJS.Timeout | undefined;
  private readonly deferMs: number;
  private closing: Promise<void> | undefined;
  private stopping = false;

  constructor(options: QueueWorkerOptions) {
    this.engine = options.engine;
    this.queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
    this.runnerId = options.runnerId ?? `queue-worker:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 30_000;
    this.logger = options.logger ?? silent;
    this.deferMs = options.deferMs ?? 1000;
    const concurrency = Math.max(1, options.concurrency ?? 16);
    this.concurrency = concurrency;
    this.worker = new Worker<QueueJobData, QueueJobResult>(this.queueName, (job, token) => this.take(job, token), {
      connection: toConnectionOptions(options.connection),
      ...(options.prefix !== undefined && { prefix: options.prefix }),
      name: this.runnerId,
      autorun: false,
      concurrency,
      lockDuration: options.lockDurationMs ?? 6_000,
      stalledInterval: options.stalledIntervalMs ?? 3_000,
      maxStalledCount: options.maxStalledCount ?? 5,
      drainDelay: (options.drainDelayMs ?? 1000) / 1000,
    });
    this.fleet = new FleetSlots(
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
      this.fleet,
    );
    this.runner = new TaskRunner({
      engine: this.engine,
      runnerId: this.runnerId,
      work: options.work,
      onTick: () =>
        this.admission.renew().catch((error: unknown) => {
          this.logger.warn({ runner: this.runnerId, error: String(error) }, 'renewal of the shared run limits failed');
        }),
      logger: this.logger,
    });
    this.worker.on('error', (error: Error) => this.logger.warn({ error: String(error) }, 'task queue worker'));
    this.worker.on('failed', (job, error) => {
      if (job?.name === WAKE_JOB_NAME) {
        // The wake-at index poll still finds the timer.
        this.logger.warn({ ...job.data, error: error.message }, 'durable timer job failed');
      } else if (job) void this.onJobFailed(job.data as TaskJobData, error);
    });
  }

  /** Tasks this worker is running now. */
  get activeTaskIds(): string[] {
    return this.runner.taskIds;
  }

  /** Connects and starts taking jobs. */
  async start(): Promise<void> {
    await this.worker.waitUntilReady();
    await this.register();
    // The owner share is a fraction of every live worker's slots: each worker renews its entry every third of a lease.
    this.registration = setInterval(() => void this.register(), Math.max(50, Math.floor(this.engine.leaseMs / 3)));
    this.registration.unref();
    this.worker
      .run()
      .catch((error: unknown) => this.logger.error({ error: String(error) }, 'task queue worker stopped'));
    this.runner.start();
  }

  /**
   * Stops taking jobs and lets running tasks finish for up to `timeoutMs` (default `shutdownTimeoutMs`). Tasks still
   * running then are handed back: their work is aborted without an outcome, and once their lease lapses the engine's
   * recovery re-runs them on another worker (retry-safe) or fails them with a clear statusMessage.
   */
  close(options: { timeoutMs?: number } = {}): Promise<void> {
    this.closing ??= (async () => {
      this.stopping = true;
      clearInterval(this.registration);
      // Runs that end from now on give their slots back at once, before the connection closes.
      await this.fleet.stopDeferring().catch(() => {});
      // Before the connection closes; a worker that cannot say so is forgotten once its entry lapses.
      await this.fleet.unregister(this.runnerId).catch(() => {});
      const handBack = () => this.runner.handBackAll('the worker shut down before the task finished');
      const timer = setTimeout(handBack, options.timeoutMs ?? this.shutdownTimeoutMs);
      try {
        await this.worker.close();
      } finally {
        clearTimeout(timer);
        this.runner.stop();
      }
    })();
    return this.closing;
  }

  /** Renews this worker's entry among the live workers and learns their slots together. */
  private async register(): Promise<void> {
    try {
      this.admission.setFleetSlots(await this.fleet.register(this.runnerId, this.concurrency));
    } catch (error) {
      this.logger.warn({ runner: this.runnerId, error: String(error) }, 'worker registration failed');
    }
  }

  // ---- one job --------------------------------------------------------------------------------------------------

  private take(job: Job<QueueJobData, QueueJobResult>, token?: string): Promise<QueueJobResult> {
    if (job.name === WAKE_JOB_NAME) return this.wake(job as Job<WakeJobData, WakeJobResult>, token);
    return this.process(job as Job<TaskJobData, TaskJobResult>, token);
  }

  /**
   * A durable timer came due: the engine resumes the task (queueing its next run) only if the record is still parked
   * until this very time, with a compare-and-set, so a duplicate, late or stale timer changes nothing. The run then
   * claims the task's journal fence as any run does. One that came early (clocks of processes differ) is put back.
   */
  private async wake(job: Job<WakeJobData, WakeJobResult>, token?: string): Promise<WakeJobResult> {
    const { taskId, wakeAt } = job.data;
    if (wakeAt > Date.now()) {
      await job.moveToDelayed(wakeAt, token);
      throw new DelayedError();
    }
    const woken = await this.engine.wake({ taskId, wakeAt });
    return { taskId, wakeAt, outcome: woken ? 'woken' : 'stale' };
  }

  private async process(job: Job<TaskJobData, TaskJobResult>, token?: string): Promise<TaskJobResult> {
    const { taskId } = job.data;
    // Heard from before the task is read: a change after that read is not missed before the run observes the task.
    const watch = this.runner.watchClaim(taskId);
    try {
      return await this.claimAndRun(job, token, watch);
    } finally {
      watch.stop();
    }
  }

  private async claimAndRun(
    job: Job<TaskJobData, TaskJobResult>,
    token: string | undefined,
    watch: TaskWatch,
  ): Promise<TaskJobResult> {
    const { taskId, attempt, record } = job.data;
    const claim = await this.claim(taskId, attempt, job.timestamp, record);
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
      await job.moveToDelayed(Date.now() + (claim.delayMs ?? 1000), token);
      throw new DelayedError();
    }
    return this.run(claim.task, attempt, watch);
  }

  /**
   * Decides whether this job's run is still due and, if so, takes the task's lease. A job carrying its task is
   * claimed on that copy first (a compare-and-set, no read); a claim that does not take it is decided on a read.
   */
  private async claim(taskId: string, attempt: number, queuedAt: number, carried?: TaskRecord): Promise<JobClaim> {
    // A claim whose reply was lost (the store went away under it) may have landed: only this worker would run it, so
    // it keeps asking the store until it knows, rather than hand the job back and leave a claimed task unrun.
    let claimUnknown = false;
    let guess = carried?.taskId === taskId ? carried : undefined;
    for (let failures = 0; ; failures++) {
      if (this.stopping) return { kind: 'requeue', reason: 'the worker is shutting down' };
      const known = guess;
      guess = undefined;
      try {
        const record = known ?? (await this.storedTask(taskId, queuedAt));
        if (!record) return this.missing(queuedAt);
        if (isTerminal(record.status)) return { kind: 'skip', reason: `the task is already ${record.status}` };
        if (this.engine.isExpired(record, Date.now())) return { kind: 'skip', reason: 'the task has expired' };
        if (this.runner.has(taskId)) return { kind: 'skip', reason: 'this worker is already running the task' };
        // Our own claim whose reply was lost: only this worker would ever renew it, so run it.
        const ours = record.attempts >= attempt;
        // Started elsewhere: from the claim on the lease decides, and recovery queues the next run if needed.
        if (ours && record.runner !== this.runnerId)
          return { kind: 'skip', reason: `run ${attempt} has already started` };
        const refusal = await this.admission.admit(record);
        if (refusal) return { kind: 'defer', reason: refusal };
        if (ours) return { kind: 'run', task: record };
        const task = await this.engine
          .markStarted(taskId, this.runnerId, attempt, record)
          .catch(async (error: unknown) => {
            claimUnknown = true;
            await this.admission.release(taskId).catch(() => {});
            throw error;
          });
        if (!task) {
          await this.admission.release(taskId).catch(() => {});
          // The carried copy is not the stored task (it changed, or is not stored yet): decide on a read.
          if (known) continue;
          return { kind: 'skip', reason: 'the task ended before it started' };
        }
        return { kind: 'run', task };
      } catch (error) {
        if (failures >= 4 && !claimUnknown) {
          return { kind: 'requeue', reason: `the task store is unavailable: ${String(error)}` };
        }
        await sleep(Math.min(100 * 2 ** failures, 2000));
      }
    }
  }

  /**
   * A job whose task is not stored (yet). The creation queues the job before its insert, and an insert that waits out
   * a store outage (up to the creation's bound, then the confirmation of a lost reply) can land long after the job was
   * queued: dropping the job then would leave that task stored with no run on its way. So the job is looked at again,
   * less and less often, until INSERT_SETTLED_MS after it was queued; only then is it dropped (the creation was refused
   * or its task removed).
   */
  private missing(queuedAt: number): JobClaim {
    const age = Date.now() - queuedAt;
    if (age >= INSERT_SETTLED_MS) return { kind: 'skip', reason: 'the task no longer exists' };
    return {
      kind: 'requeue',
      reason: 'the task is not stored yet: its creation may still be waiting for the store',
      delayMs: Math.min(Math.max(1000, Math.floor(age / 2)), INSERT_SETTLED_MS - age),
    };
  }

  /** Runs a claimed task through the engine's run path (TaskRunner), then frees the slots admission took. */
  private async run(task: TaskRecord, attempt: number, watch: TaskWatch): Promise<TaskJobResult> {
    try {
      return { taskId: task.taskId, attempt, ...(await this.runner.run(task, undefined, watch)) };
    } finally {
      await this.admission.release(task.taskId).catch((error: unknown) => {
        // The entries lapse with their lease.
        this.logger.warn({ taskId: task.taskId, error: String(error) }, 'could not release a shared run slot');
      });
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

/** How long a job waits in place for its task to be stored: the server queues the job just before inserting it. */
const INSERT_GRACE_MS = 5000;

/**
 * How long after its job was queued a creation's insert may still land: the creation's wait (CREATE_WAIT_MS), then
 * the confirmation of an insert whose reply was lost (STORE_WAIT_MS after the loss), with room for a slow store.
 */
const INSERT_SETTLED_MS = 2 * (CREATE_WAIT_MS + STORE_WAIT_MS);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
