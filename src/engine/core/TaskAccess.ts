import type { Clock } from '../contracts/Clock.js';
import type { EngineLogger, TaskLifecycleEvent } from '../contracts/EngineHooks.js';
import { inScope, type OwnerScope } from '../record/OwnerScope.js';
import type { TaskChange } from '../record/TaskChange.js';
import { StoreUnavailableError, TaskExpiredError, TaskNotFoundError, isTaskError } from '../record/TaskError.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';
import type { ReplaceAlong, TaskStore } from '../contracts/TaskStore.js';
import { StoreReachability } from './StoreReachability.js';
import { isExpired } from '../record/transitions.js';
import type { TimelineRecorder } from './TimelineRecorder.js';
import type { TimelineEntry } from '../record/TaskTimeline.js';

/** The result of a compare-and-set update: the record now stored, and whether this call changed it. */
export interface Update {
  record: TaskRecord;
  changed: boolean;
}

/**
 * The engine's way to the store: failures become StoreUnavailableError, reads are guarded by owner, every write is a
 * compare-and-set retried on a fresh read and announced on the event bus, and lifecycle hooks never break a write.
 */
export class TaskAccess {
  /** Each stored status change, awaited before the write returns (the task's event log records it: TaskEvents). */
  onStatusChange: ((previous: TaskRecord, next: TaskRecord) => Promise<void>) | undefined;

  constructor(
    readonly store: TaskStore,
    private readonly clock: Clock,
    private readonly logger: EngineLogger,
    private readonly onLifecycle: ((event: TaskLifecycleEvent) => void) | undefined,
    /** Every stored write's (previous, next) pair goes here, right after the compare-and-set won. */
    readonly timelines: TimelineRecorder,
    /** Called with each record this process moved to a terminal status (the task span ends there). */
    private readonly onSettled: (record: TaskRecord) => void = () => {},
    /** Failures and slow answers of the store, as this process met them (lease recovery waits them out). */
    readonly reachability = new StoreReachability(clock, Number.POSITIVE_INFINITY),
  ) {}

  /** Whether a write that ends a task sends its record with its event (TaskEngineOptions.eventRecords). */
  eventRecords = true;

  /** Runs a store operation; a failure that is not one of ours reads as the store being unavailable. */
  async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await this.reachability.watch(operation, isOutage);
    } catch (error) {
      if (isTaskError(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      throw new StoreUnavailableError(`Task store unavailable: ${message}`, { cause: error });
    }
  }

  read(taskId: string): Promise<TaskRecord | undefined> {
    return this.guard(() => this.store.get(taskId));
  }

  /** A task visible to `scope`; foreign and missing tasks raise the same error. */
  async readVisible(scope: OwnerScope, taskId: string): Promise<TaskRecord> {
    return this.visible(await this.read(taskId), scope, taskId);
  }

  /** The owner guard: `record` if `scope` may see it and it has not expired. */
  visible(record: TaskRecord | undefined, scope: OwnerScope, lookup: string): TaskRecord {
    if (!record) throw new TaskNotFoundError(lookup);
    // spec R63 R67: a foreign task is indistinguishable from a missing one.
    if (!inScope(record, scope)) throw new TaskNotFoundError(lookup);
    if (isExpired(record, this.clock.now())) throw new TaskExpiredError(lookup);
    return record;
  }

  /**
   * Read-modify-write with compare-and-set. `change` returns the next record (without touching the one it is given)
   * or null for "no change". Concurrent writers retry on a fresh read, so racing terminal transitions always leave
   * exactly one terminal state; `change` may therefore run more than once.
   */
  async update(
    taskId: string,
    change: (current: TaskRecord) => TaskRecord | null,
    /**
     * A copy of the task the caller read moments ago (or wrote itself): the first compare-and-set is tried on it
     * without a read. Only a write can rest on it; a refusal (`null` or a throw) is decided on a fresh read.
     */
    known?: TaskRecord,
    /** Timeline entries of this write besides those its change implies (written with it where the store can). */
    entries?: TimelineEntry[],
  ): Promise<Update> {
    for (let attempt = 0; ; attempt++) {
      const guess = attempt === 0 && known?.taskId === taskId ? known : undefined;
      const current = guess ?? (await this.read(taskId));
      if (!current) throw new TaskNotFoundError(taskId);
      let proposed: TaskRecord | null;
      try {
        proposed = change(current);
      } catch (error) {
        if (guess) continue;
        throw error;
      }
      if (proposed === null) {
        if (guess) continue;
        return { record: current, changed: false };
      }
      const next: TaskRecord = {
        ...proposed,
        version: current.version + 1,
        lastUpdatedAt: Math.max(this.clock.now(), current.lastUpdatedAt),
      };
      // A write that ends the task sends it along: its waiters in other processes need not read it back.
      const announced: TaskChange = {
        version: next.version,
        status: next.status,
        ...(this.eventRecords && isTerminal(next.status) && { record: next }),
      };
      // A store that can appends the timeline and publishes the change with the write itself.
      const timeline = this.store.replacesAlong ? this.timelines.entriesFor(current, next, entries) : undefined;
      const along: ReplaceAlong | undefined = this.store.replacesAlong
        ? { change: announced, previous: current, ...(timeline && { timeline }) }
        : undefined;
      if (await this.guard(() => this.store.replace(next, current.version, along))) {
        if (!along) await this.timelines.record(current, next, entries);
        if (!isTerminal(current.status) && isTerminal(next.status)) this.onSettled(next);
        if (current.status !== next.status) await this.onStatusChange?.(current, next);
        if (!along) await this.publish(taskId, announced);
        return { record: next, changed: true };
      }
      if (attempt > 1000) throw new StoreUnavailableError(`Could not update task ${taskId}: too much contention`);
    }
  }

  /** Told of each task this process removed (deleted, swept or evicted), after what it kept beside it went. */
  readonly removedListeners = new Set<(taskId: string) => void>();

  /** Removes what is kept beside a deleted or swept task (its step journal, its timeline, its event log). */
  async removeAttached(taskId: string): Promise<void> {
    await this.guard(async () => this.store.journal?.remove(taskId));
    await this.guard(async () => this.store.eventLog?.remove(taskId));
    await this.guard(() => this.timelines.remove(taskId));
    for (const listener of this.removedListeners) listener(taskId);
  }

  /** Wakes the task's waiters in every process. */
  async publish(taskId: string, change?: TaskChange): Promise<void> {
    try {
      await this.store.events.publish(taskId, change);
    } catch (error) {
      // Events only wake waiters; the re-check interval covers a lost one.
      this.logger.warn({ taskId, error: String(error) }, 'task event publish failed');
    }
  }

  /** Tells the lifecycle hook; a hook that throws is logged, never fails the change already stored. */
  emit(event: TaskLifecycleEvent): void {
    try {
      this.onLifecycle?.(event);
    } catch (error) {
      this.logger.warn({ taskId: event.task.taskId, error: String(error) }, 'lifecycle hook threw');
    }
  }
}

/** A store failure, not a refusal of ours (a missing task, a conflict): the store could not be used. */
function isOutage(error: unknown): boolean {
  return !isTaskError(error) || error instanceof StoreUnavailableError;
}
