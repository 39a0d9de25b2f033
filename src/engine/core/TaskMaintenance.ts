import type { Clock } from '../contracts/Clock.js';
import type { EngineLogger } from '../contracts/EngineHooks.js';
import { withRunProgress, type RecoveryDecision, type RecoveryPolicy } from './RecoveryPolicy.js';
import type { WakeEntry } from '../contracts/StepJournalStore.js';
import type { TaskAccess } from './TaskAccess.js';
import { TaskNotFoundError } from '../record/TaskError.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import { releaseSpanHolder } from '../tracing/taskTracing.js';
import { recover, wake, wakeIsStale, type LeaseGrant } from '../record/transitions.js';
import { WakeScheduler } from './WakeScheduler.js';

/** Where the engine hands a task over to run: the lease it gets on the way (if the executor leases then) and the executor. */
export interface RunHandover {
  lease(now: number): LeaseGrant | undefined;
  submit(record: TaskRecord): Promise<void>;
  /** Whether the executor keeps durable timers itself (Executor.scheduleWake). */
  keepsTimers(): boolean;
  /** Hands a durable timer to the executor that keeps timers. */
  scheduleWake(entry: WakeEntry): Promise<void>;
}

/** The wake-at index poll when it arms every timer, and when it only backs up an executor that keeps them. */
export const WAKE_INTERVAL_MS = 1000;
export const SAFETY_NET_WAKE_INTERVAL_MS = 10_000;

export interface MaintenanceOptions {
  leaseMs: number;
  /** 0 disables the loop. */
  sweepIntervalMs: number;
  recoveryIntervalMs: number;
  /** 0 disables the poll; undefined picks the default for the executor (set by then) at start. */
  wakeIntervalMs: number | undefined;
  recoveryPolicy: RecoveryPolicy;
}

/**
 * The engine's background work over the store: the expiry sweep, recovery of tasks whose runner stopped renewing its
 * lease, and durable timers (workflow sleeps, retries, question deadlines). Runs in every server and worker process;
 * every change is a compare-and-set, so processes doing it at once never apply one twice.
 */
export class TaskMaintenance {
  private timers: NodeJS.Timeout[] = [];
  private wakes: WakeScheduler | undefined;

  constructor(
    private readonly access: TaskAccess,
    private readonly clock: Clock,
    private readonly logger: EngineLogger,
    private readonly handover: RunHandover,
    private readonly options: MaintenanceOptions,
  ) {}

  /** Recovers what dead processes left running, then starts the loops. */
  async start(): Promise<void> {
    await this.recover();
    const { sweepIntervalMs, recoveryIntervalMs } = this.options;
    if (sweepIntervalMs > 0) this.every(sweepIntervalMs, () => this.sweep());
    if (recoveryIntervalMs > 0) this.every(recoveryIntervalMs, () => this.recover());
    const wakeIntervalMs =
      this.options.wakeIntervalMs ?? (this.handover.keepsTimers() ? SAFETY_NET_WAKE_INTERVAL_MS : WAKE_INTERVAL_MS);
    const journal = this.access.store.journal;
    if (journal && wakeIntervalMs > 0) {
      const onError = (error: unknown) => this.logger.error({ error: String(error) }, 'durable timer failed');
      this.wakes = new WakeScheduler(journal, (entry) => this.wake(entry), wakeIntervalMs, this.clock, onError);
      this.wakes.start();
    }
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.wakes?.stop();
    this.wakes = undefined;
  }

  /** Removes expired tasks in batches; work still running for them is aborted through their events. */
  async sweep(batch = 500): Promise<number> {
    const { store } = this.access;
    let total = 0;
    for (;;) {
      const removed = await this.access.guard(() => store.sweepExpired(this.clock.now(), batch));
      total += removed.length;
      for (const record of removed) {
        await this.access.removeAttached(record.taskId);
        await this.access.publish(record.taskId);
      }
      if (removed.length < batch) return total;
    }
  }

  /** Finds tasks whose runner stopped renewing its lease and applies the recovery policy to each. */
  async recover(): Promise<{ failed: number; rerun: number }> {
    const counts = { failed: 0, rerun: 0 };
    // spec R49: a lease that lapsed while the store was failing says nothing of its runner, which could not renew it
    // either; a live runner renews within a third of a lease of the store's return, so recovery waits a whole lease.
    if (this.access.reachability.steadyFor(this.clock.now()) < this.options.leaseMs) return counts;
    const stale = await this.access.guard(() => this.access.store.findStale(this.clock.now(), 1000));
    // The scan itself may have waited out the outage (its answer came slowly, as the store returned): ask again.
    if (this.access.reachability.steadyFor(this.clock.now()) < this.options.leaseMs) return counts;
    for (const lost of stale) {
      // No run ever claimed it: the recover transition queues it again, outside the policy (nothing was run).
      const started = lost.attempts > 0;
      const steps = started ? await this.completedSteps(lost) : 0;
      const decision: RecoveryDecision = started
        ? this.options.recoveryPolicy(withRunProgress(lost, steps))
        : { action: 'rerun' };
      try {
        const { record: next, changed } = await this.access.update(lost.taskId, (record) => {
          const now = this.clock.now();
          // An in-process runner that lost its lease created the task: its span died with it (TaskSpans).
          // Claimed since the read: decided again on the next scan, with the policy.
          if (!started && record.attempts > 0) return null;
          const held = releaseSpanHolder(record, record.runner) ?? record;
          return recover(started ? withRunProgress(held, steps) : held, decision, now, this.handover.lease(now));
        });
        if (!changed) continue;
        this.access.emit({ type: 'recovered', task: next, action: decision.action });
        if (decision.action === 'fail') {
          this.access.emit({ type: 'finished', task: next });
          counts.failed += 1;
          this.logger.warn({ taskId: next.taskId, owner: next.owner }, 'task failed after its runner stopped');
        } else {
          counts.rerun += 1;
          this.logger.warn(
            { taskId: next.taskId, owner: next.owner, attempt: next.attempts + 1 },
            started
              ? 'task re-run after its runner stopped'
              : 'task queued again: its holder stopped before it started',
          );
          await this.handover.submit(next);
        }
      } catch (error) {
        if (!(error instanceof TaskNotFoundError)) throw error;
      }
    }
    return counts;
  }

  /** The journaled steps `task` has completed, its progress across lost runs; only retry-safe work needs counting. */
  private async completedSteps(task: TaskRecord): Promise<number> {
    const { journal } = this.access.store;
    if (!journal || !task.retrySafe) return 0;
    const rows = await this.access.guard(() => journal.read(task.taskId));
    return rows.filter((row) => row.state === 'completed').length;
  }

  /** Extends the leases of every task `runner` holds. */
  async renewLeases(runner: string): Promise<void> {
    await this.access.guard(() => this.access.store.renewLeases(runner, this.clock.now() + this.options.leaseMs));
  }

  /**
   * Hands a durable timer just stored to the executor that keeps timers (a promise to await), or else arms an
   * in-process one at once (the index poll would find it too). Should the executor not take it, the in-process timer
   * and the poll stand in.
   */
  schedule(entry: WakeEntry): Promise<void> | undefined {
    if (!this.handover.keepsTimers()) {
      this.wakes?.schedule(entry);
      return undefined;
    }
    return this.handover.scheduleWake(entry).catch((error: unknown) => {
      this.logger.warn({ taskId: entry.taskId, error: String(error) }, 'the executor did not take a durable timer');
      this.wakes?.schedule(entry);
    });
  }

  /**
   * Fires a durable timer: a task still parked until then goes back to `working` (unanswered questions are withdrawn)
   * and to the executor. Timers of tasks that moved on are cleared. True when this call resumed the task.
   */
  async wake(entry: WakeEntry): Promise<boolean> {
    const { taskId, wakeAt } = entry;
    const { journal } = this.access.store;
    let stale = false;
    try {
      const { record: next, changed } = await this.access.update(taskId, (record) => {
        const now = this.clock.now();
        stale = wakeIsStale(record, wakeAt);
        return wake(record, wakeAt, now, this.handover.lease(now));
      });
      if (changed || stale) await this.access.guard(async () => journal?.clearWake(taskId, wakeAt));
      if (changed) await this.handover.submit(next);
      return changed;
    } catch (error) {
      if (!(error instanceof TaskNotFoundError)) throw error;
      await this.access.guard(async () => journal?.remove(taskId));
      return false;
    }
  }

  private every(ms: number, job: () => Promise<unknown>): void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      job()
        .catch((error: unknown) => this.logger.error({ error: String(error) }, 'background task maintenance failed'))
        .finally(() => {
          running = false;
        });
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }
}
