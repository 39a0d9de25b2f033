import { silentLogger, type EngineLogger } from '../contracts/EngineHooks.js';
import type { EngineHandle, TaskSuspension, TaskWork } from '../contracts/Executor.js';
import { INTERNAL_ERROR_CODE, type ReportedStatus, type TaskOutcome, type TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';
import type { TimelineEntry } from '../record/TaskTimeline.js';
import { RunSpan } from '../tracing/taskTracing.js';
import { retryPause } from '../core/retryPause.js';
import { watchTask, type TaskWatch } from '../core/TaskWatch.js';
import { superseded } from '../record/transitions.js';
import { RunStatusWrites } from './RunStatusWrites.js';
import { runContext } from './runContext.js';
import { TaskRunAbortedError } from './TaskRunAbortedError.js';

export { TaskRunAbortedError } from './TaskRunAbortedError.js';

/** How one run ended: its outcome was recorded (or it suspended itself), it was aborted, or handed back at shutdown. */
export interface RunEnd {
  outcome: 'finished' | 'aborted' | 'handed-back';
  reason?: string;
}

export interface TaskRunnerOptions {
  engine: EngineHandle;
  /** Stored as the runner of the tasks it runs. */
  runnerId: string;
  work: TaskWork;
  /** Whether the runner holds leases besides its running tasks (in-process: tasks leased at creation, still queued). */
  holdsLeases?: () => boolean;
  /** Also done on every lease tick while runs are held (a queue worker's tool slots). */
  onTick?: () => Promise<void>;
  logger?: EngineLogger;
}

interface Run {
  taskId: string;
  controller: AbortController;
  /** The attempt this run claimed: a later claim of the task supersedes it. */
  attempt: number;
  /** The work has returned; what is left is recording its outcome. */
  returned: boolean;
  /** The newest copy of the task this run has read: its outcome is written on it first (saves a read). */
  latest: TaskRecord;
  /** The run's last report of itself (message, progress): written again with the outcome, so none is lost. */
  reported?: ReportedStatus;
  /** The work returned SUSPENDED: the run ended parked (for input or a durable timer), not finished. */
  parked?: boolean;
  /** What the work started still runs after the work returned on its abort (TaskWorkContext.endsLater). */
  endsLater?: Promise<unknown>;
  /** The run's end went on the timeline with its outcome. */
  endRecorded?: boolean;
}

const TASK_GONE = 'the task no longer exists';

/**
 * The one run path of every executor: gives claimed work its context, settles its outcome, keeps the runner's leases
 * (a tick every third of a lease, so one failed renewal does not lose them) and aborts a run that is no longer due:
 * the task was cancelled, deleted or expired through any instance (spec R50), or another runner (or a later attempt
 * of this one) has taken it over, so the superseded run never records an outcome over the newer one's.
 */
export class TaskRunner {
  readonly runnerId: string;
  private readonly engine: EngineHandle;
  private readonly work: TaskWork;
  private readonly holdsLeases: () => boolean;
  private readonly onTick: (() => Promise<void>) | undefined;
  private readonly logger: EngineLogger;
  /**
   * Every run not yet ended, by task: a task may have two while a run superseded by this runner's own later claim (its
   * lease lapsed under a stalled loop) has not heard of it yet; the lease ticks and a hand-back must reach it too.
   */
  private readonly running = new Map<string, Set<Run>>();
  private ticker: NodeJS.Timeout | undefined;
  private handedBack = false;

  constructor(options: TaskRunnerOptions) {
    this.engine = options.engine;
    this.runnerId = options.runnerId;
    this.work = options.work;
    this.holdsLeases = options.holdsLeases ?? (() => false);
    this.onTick = options.onTick;
    this.logger = options.logger ?? silentLogger;
  }

  /** Tasks running now. */
  get taskIds(): string[] {
    return [...this.running.keys()];
  }

  has(taskId: string): boolean {
    return this.running.has(taskId);
  }

  /** Starts the lease ticker (idempotent). */
  start(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => void this.tick(), Math.max(50, Math.floor(this.engine.leaseMs / 3)));
    this.ticker.unref();
  }

  stop(): void {
    clearInterval(this.ticker);
    this.ticker = undefined;
  }

  /**
   * Claims a task leased to this runner (runner, lease, attempt) and runs it; undefined when it is not due any more. A
   * claim the store refuses is retried: the lease is this runner's until the claim lands or the run is aborted.
   */
  async claimAndRun(
    taskId: string,
    controller = new AbortController(),
    /** The task as its submitter had it: the claim is tried on it first. */
    known?: TaskRecord,
  ): Promise<RunEnd | undefined> {
    const { signal } = controller;
    const watch = this.watchClaim(taskId);
    try {
      for (let failures = 0; !signal.aborted; failures++) {
        let task: TaskRecord | undefined;
        try {
          task = await this.engine.markStarted(taskId, this.runnerId, undefined, failures === 0 ? known : undefined);
        } catch (error) {
          this.logger.warn({ taskId, error: String(error) }, 'could not claim the task; retrying');
          await retryPause(failures, signal);
          continue;
        }
        return task && !signal.aborted ? await this.run(task, controller, watch) : undefined;
      }
      return undefined;
    } finally {
      watch.stop();
    }
  }

  /**
   * Starts hearing a task's events before its claim, so a change that lands between the claim and the run's own
   * observer (another instance cancels the task) is not missed; `run` stops it once its own observer is on.
   */
  watchClaim(taskId: string): TaskWatch {
    return watchTask(this.engine.store.events, taskId);
  }

  /**
   * Runs the work of a task this runner has claimed, to its end, inside its trace span. Never rejects for the work's
   * sake. Without a `watch` begun before the claim, the task is re-read once its run observes it.
   */
  async run(task: TaskRecord, controller = new AbortController(), watch?: TaskWatch): Promise<RunEnd> {
    const span = new RunSpan(task, this.runnerId);
    try {
      const end = await span.within(() => this.runTraced(task, controller, watch));
      span.end(end.reason === 'suspended for input' ? 'suspended' : end.outcome);
      return end;
    } catch (error) {
      span.end('interrupted', String(error));
      throw error;
    }
  }

  private async runTraced(task: TaskRecord, controller: AbortController, watch?: TaskWatch): Promise<RunEnd> {
    const { taskId, attempts: attempt } = task;
    const { signal } = controller;
    const run: Run = { taskId, controller, attempt, returned: false, latest: task };
    const writes = new RunStatusWrites(this.engine, run);
    const runs = this.running.get(taskId) ?? new Set<Run>();
    this.running.set(taskId, runs.add(run));
    // The store's events (cross-process where the store has them) wake this observer; the lease ticks re-read the
    // task in case an event was lost.
    const stopObserving = this.engine.observe(
      taskId,
      (record) => this.check(run, record),
      // Versions this run has seen are skipped, and so is a terminal status once the work has returned (check()
      // ignores it then: most likely the run's own outcome landing).
      (change) => change.version > run.latest.version && !(run.returned && isTerminal(change.status)),
    );
    // A change between the claim and this observer was heard by the watch (or, without one, is found by a read).
    if (!watch || watch.heardPast(task.version)) this.recheck(run);
    watch?.stop();
    this.logger.info({ taskId, attempt, runner: this.runnerId }, 'task started');
    const stopping = this.watchStop(run);
    try {
      let outcome: TaskOutcome | TaskSuspension;
      let statusMessage: string | undefined;
      try {
        outcome = await this.work(runContext(this.engine, task, signal, run, writes));
      } catch (error) {
        if (signal.aborted) return this.aborted(task, signal);
        const message = error instanceof Error ? error.message : String(error);
        outcome = { kind: 'error', error: { code: INTERNAL_ERROR_CODE, message } };
        statusMessage = `The task's work failed: ${message}`;
      }
      if (signal.aborted) return this.aborted(task, signal);
      run.returned = true;
      // The run's own reports land before its outcome (or its parking) is written, never racing it.
      await writes.settle(outcome.kind === 'suspended');
      if (outcome.kind === 'suspended') {
        run.parked = true;
        // Parked without a runner, for input or a durable timer: an answer or the timer hands it to the executor again.
        this.logger.info(
          { taskId, attempt, runner: this.runnerId },
          'task run parked (waiting for input or a durable timer)',
        );
        return { outcome: 'finished', reason: 'suspended for input' };
      }
      const final = outcome;
      // Conditional on the run's attempt: an event telling of a later claim may not have arrived yet.
      let recorded = false;
      // The run's end goes in the outcome's write (one write fewer), unless what the work started still runs.
      const ends = run.endsLater || !this.engine.runEnded ? undefined : [runEnd(attempt)];
      await this.settle(taskId, signal, async () => {
        const { latest, reported } = run;
        recorded = await this.engine.complete(taskId, final, statusMessage, latest, attempt, reported, ends);
      });
      run.endRecorded = recorded && ends !== undefined;
      if (recorded) this.logger.info({ taskId, attempt, runner: this.runnerId }, 'task run finished');
      // Fencing: the task ended meanwhile (cancelled, or recovered after this run's lease lapsed) or a later attempt
      // holds it; the outcome this run holds is dropped, and the log says so rather than that it finished.
      else
        this.logger.warn(
          { taskId, attempt, runner: this.runnerId },
          'task outcome refused: the run no longer held the task',
        );
      return { outcome: 'finished' };
    } finally {
      void writes.settle();
      if (run.endsLater) void run.endsLater.then(stopping.ended, stopping.ended);
      else stopping.ended();
      stopObserving();
      runs.delete(run);
      // A task's set is dropped only once empty, so an empty one is still the task's.
      if (runs.size === 0) this.running.delete(taskId);
    }
  }

  /**
   * Times a run from the abort that tells it to stop to its work returning, and flags it on the task's timeline once
   * it outlives the grace period (its work ignores the abort); `ended` records how the run ended. Runs that end on
   * their own record `finished` (or `parked`); a run whose task is gone records nothing.
   */
  private watchStop(run: Run): { ended(): void } {
    const { signal } = run.controller;
    const record = this.engine.runEnded?.bind(this.engine);
    if (!record) return { ended() {} };
    const grace = this.engine.abortGraceMs ?? 10_000;
    let abortedAt: number | undefined;
    let overdue: NodeJS.Timeout | undefined;
    const onAbort = () => {
      abortedAt = Date.now();
      overdue = setTimeout(() => {
        this.logger.warn({ taskId: run.taskId, graceMs: grace }, 'task run still running after it was told to stop');
        void record(run.latest, { at: Date.now(), kind: 'run_overdue', graceMs: grace });
      }, grace);
      overdue.unref();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    return {
      ended: () => {
        signal.removeEventListener('abort', onAbort);
        clearTimeout(overdue);
        if (run.endRecorded) return;
        const entry = runEnd(run.attempt);
        const at = entry.at;
        if (abortedAt !== undefined) {
          const handedBack = signal.reason instanceof TaskRunAbortedError && signal.reason.handedBack;
          entry.ran = handedBack ? 'handed-back' : 'aborted';
          entry.stopMs = at - abortedAt;
          // A deleted task keeps no timeline.
          if (signal.reason instanceof TaskRunAbortedError && signal.reason.message === TASK_GONE) return;
        } else if (run.parked) entry.ran = 'parked';
        void record(run.latest, entry);
      },
    };
  }

  /**
   * Aborts every run without an outcome (shutdown past its grace): once their leases lapse, the engine's recovery
   * re-runs them elsewhere (retry-safe) or fails them with a clear statusMessage.
   */
  handBackAll(reason: string): void {
    this.handedBack = true;
    for (const run of this.runs()) {
      this.logger.warn({ taskId: run.taskId, runner: this.runnerId }, 'task handed back at shutdown');
      run.controller.abort(new TaskRunAbortedError(reason, true));
    }
  }

  private aborted(task: TaskRecord, signal: AbortSignal): RunEnd {
    const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
    const handedBack = signal.reason instanceof TaskRunAbortedError && signal.reason.handedBack;
    this.logger.info(
      { taskId: task.taskId, attempt: task.attempts, runner: this.runnerId, reason },
      'task run aborted',
    );
    return { outcome: handedBack ? 'handed-back' : 'aborted', reason };
  }

  /** Records the outcome, retrying while the store is unreachable: the task is ours until it lands or we stop. */
  private async settle(taskId: string, signal: AbortSignal, write: () => Promise<unknown>): Promise<void> {
    for (let failures = 0; ; failures++) {
      try {
        await write();
        return;
      } catch (error) {
        this.logger.warn({ taskId, error: String(error) }, 'could not record the task outcome; retrying');
        // After a hand-back or a take-over the lease, not this runner, decides what happens to the task.
        if (signal.aborted || this.handedBack) return;
        await retryPause(failures, signal);
      }
    }
  }

  /**
   * The takeover check: aborts the run when the task is over, gone, or no longer this run's. Decided for `run` itself:
   * a later run of the same task by this runner may be running beside it.
   */
  private check(run: Run, record: TaskRecord | undefined): void {
    if (run.controller.signal.aborted) return;
    if (record && record.version > run.latest.version) run.latest = record;
    let reason: string | undefined;
    if (!record) reason = TASK_GONE;
    // Once the work has returned, a terminal status is most likely its own outcome landing (the engine keeps the first).
    else if (isTerminal(record.status)) reason = run.returned ? undefined : `the task is ${record.status}`;
    else if (this.engine.isExpired(record, Date.now())) reason = 'the task has expired';
    // A run that suspended itself for input gave its lease up and is about to return; a suspension by a later
    // attempt (found below) is a takeover like any other.
    else if (record.suspended && !superseded(record, run.attempt)) return;
    else if (record.runner !== this.runnerId && !record.suspended) reason = 'another runner has taken the task over';
    else if (superseded(record, run.attempt))
      reason = `a later run (attempt ${record.attempts}) has taken the task over`;
    if (reason) run.controller.abort(new TaskRunAbortedError(reason));
  }

  private recheck(run: Run): void {
    this.engine.store.get(run.taskId).then(
      (record) => this.check(run, record),
      () => {
        // Re-read on the next tick.
      },
    );
  }

  private async tick(): Promise<void> {
    if (this.running.size === 0 && !this.holdsLeases()) return;
    try {
      await this.engine.renewLeases(this.runnerId);
    } catch (error) {
      // Retried on the next tick; the lease is three ticks long.
      this.logger.warn({ runner: this.runnerId, error: String(error) }, 'lease renewal failed');
    }
    for (const run of this.runs()) this.recheck(run);
    await this.onTick?.();
  }

  private *runs(): Generator<Run> {
    for (const runs of this.running.values()) yield* runs;
  }
}

/** A run's end on its timeline, as `finished` (the default). */
function runEnd(attempt: number): TimelineEntry {
  return { at: Date.now(), kind: 'run_ended', ran: 'finished', attempt };
}
