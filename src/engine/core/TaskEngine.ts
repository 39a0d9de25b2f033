// Over 400 lines: the engine's one public face, kept whole so a caller reads one class; each method is a short
// forward to the part that holds its logic (TaskAccess, TaskCreation, TaskInputs, TaskWaiting, TaskMaintenance).
import type { TaskChange } from '../record/TaskChange.js';
import { systemClock, type Clock } from '../contracts/Clock.js';
import { CursorCodec } from '../record/CursorCodec.js';
import { silentLogger, type EngineLogger } from '../contracts/EngineHooks.js';
import { capOutcome, checkLimits, DEFAULT_LIMITS, type EngineLimits } from './EngineLimits.js';
import type { EngineHandle, Executor } from '../contracts/Executor.js';
import { FetchedEviction } from './FetchedEviction.js';
import { ANY_OWNER, type OwnerScope } from '../record/OwnerScope.js';
import { defaultRecoveryPolicy } from './RecoveryPolicy.js';
import type { WakeEntry } from '../contracts/StepJournalStore.js';
import { StoreReachability } from './StoreReachability.js';
import { TaskAccess } from './TaskAccess.js';
import { TaskCreation, type CreateTaskInput } from './TaskCreation.js';
import {
  DEFAULT_ABORT_GRACE_MS,
  DEFAULT_LEASE_MS,
  type ListResult,
  type TaskEngineOptions,
} from './TaskEngineOptions.js';
import { StoreUnavailableError, TaskLimitError, TaskNotFoundError } from '../record/TaskError.js';
import { OwnerRefusals } from './OwnerRefusals.js';
import { TaskInputs } from './TaskInputs.js';
import { TaskMaintenance, type RunHandover } from './TaskMaintenance.js';
import {
  INTERNAL_ERROR_CODE,
  type InputAnswer,
  type InputRequest,
  type JsonRpcErrorObject,
  type ProgressUpdate,
  type ReportedStatus,
  type TaskOutcome,
  type TaskRecord,
} from '../record/TaskRecord.js';
import { TaskSpans } from '../tracing/TaskSpans.js';
import type { TaskStore } from '../contracts/TaskStore.js';
import { releaseSpanHolder } from '../tracing/taskTracing.js';
import type { TimelineEntry } from '../record/TaskTimeline.js';
import { TaskEvents, type EmittedEvent, type EventAppendedListener } from './TaskEvents.js';
import type { LoggedEvent } from '../contracts/TaskEventLog.js';
import { TaskWaiting } from './TaskWaiting.js';
import { watchTask, type TaskWatch } from './TaskWatch.js';
import { TimelineRecorder } from './TimelineRecorder.js';
import * as transitions from '../record/transitions.js';
import { askForInput } from './askForInput.js';
import type { LeaseGrant } from '../record/transitions.js';

/**
 * The task engine: dialect-neutral lifecycle, owner scoping, expiry, waiting and recovery over a TaskStore. A façade
 * over its parts: the pure lifecycle (transitions.ts), store access (TaskAccess), creation (TaskCreation), the work's
 * input requests, parking and offers (TaskInputs), waiting (TaskWaiting) and background maintenance (TaskMaintenance).
 */
export class TaskEngine implements EngineHandle {
  readonly store: TaskStore;
  readonly clock: Clock;
  readonly limits: EngineLimits;
  readonly leaseMs: number;
  readonly abortGraceMs: number;
  private executor: Executor | undefined;
  private readonly logger: EngineLogger;
  private readonly cursorTtlMs: number;
  private cursors: CursorCodec | undefined;
  private readonly access: TaskAccess;
  private readonly creation: TaskCreation;
  private readonly room: FetchedEviction;
  private readonly waiting: TaskWaiting;
  private readonly maintenance: TaskMaintenance;
  private readonly inputs: TaskInputs;
  private readonly spans: TaskSpans;
  private readonly events: TaskEvents;
  private readonly refusals = new OwnerRefusals();
  private started = false;

  constructor(options: TaskEngineOptions) {
    this.store = options.store;
    this.executor = options.executor;
    this.clock = options.clock ?? systemClock;
    // A limit given as undefined keeps its default.
    const given = Object.entries(options.limits ?? {}).filter(([, value]) => value !== undefined);
    this.limits = { ...DEFAULT_LIMITS, ...Object.fromEntries(given) };
    checkLimits(this.limits);
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.abortGraceMs = options.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
    this.cursorTtlMs = options.cursorTtlMs ?? 60 * 60 * 1000;
    this.logger = options.logger ?? silentLogger;
    const timelines = new TimelineRecorder(this.store, this.limits.timelineEntries, this.logger);
    this.access = new TaskAccess(
      this.store,
      this.clock,
      this.logger,
      options.onLifecycle,
      timelines,
      (record) => this.spans.settled(record),
      // A renewal tick is a third of a lease: an answer slower than that may have cost a runner its renewal.
      new StoreReachability(this.clock, Math.ceil(this.leaseMs / 3)),
    );
    this.events = new TaskEvents(this.access, this.clock, this.logger, this.limits, {
      ...(options.checkEvent && { check: options.checkEvent }),
      statusEvents: options.statusEvents ?? false,
    });
    this.access.onStatusChange = (previous, next) => this.events.recordStatus(previous, next);
    this.access.eventRecords = options.eventRecords ?? true;
    this.waiting = new TaskWaiting(this.access, this.clock, this.logger, options.recheckIntervalMs ?? 5_000);
    this.spans = new TaskSpans(
      {
        observe: (taskId, listener, wants) => this.waiting.observe(taskId, listener, wants),
        release: (taskId, holder) => this.releaseSpan(taskId, holder),
      },
      () => (this.executor?.leasesOnCreate ? this.executor.runnerId : undefined),
      this.logger,
    );
    const handover: RunHandover = {
      lease: (now) => this.leaseOnHandover(now),
      submit: async (record) => this.executor?.submit(record),
      keepsTimers: () => this.executor?.scheduleWake !== undefined,
      scheduleWake: async (entry) => this.executor?.scheduleWake?.(entry),
    };
    this.maintenance = new TaskMaintenance(this.access, this.clock, this.logger, handover, {
      leaseMs: this.leaseMs,
      sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
      // A lapsed lease is found within a third of a lease, so a dead runner is noticed within 4/3 of a lease.
      recoveryIntervalMs: options.recoveryIntervalMs ?? Math.ceil(this.leaseMs / 3),
      wakeIntervalMs: options.wakeIntervalMs,
      recoveryPolicy: options.recoveryPolicy ?? defaultRecoveryPolicy(),
    });
    this.inputs = new TaskInputs(this.access, this.clock, this.limits, handover, this.maintenance);
    this.room = new FetchedEviction(this.access, this.clock, this.logger, this.limits);
    this.creation = new TaskCreation(
      this.access,
      this.clock,
      this.logger,
      this.limits,
      this.leaseMs,
      this.spans,
      () => this.executor,
      () => this.sweep(),
      this.room,
    );
  }

  /** Sets the executor after construction (executors that need the engine are built after it). */
  setExecutor(executor: Executor): void {
    this.executor = executor;
  }

  /** Opens the store, recovers tasks left running by dead processes and starts the background loops. */
  async start(): Promise<void> {
    if (this.started) return;
    await this.store.init();
    await this.store.journal?.init();
    await this.access.timelines.init();
    await this.events.init();
    this.cursors = new CursorCodec(await this.store.getSecret(), this.cursorTtlMs);
    this.started = true;
    await this.maintenance.start();
  }

  async close(): Promise<void> {
    this.maintenance.stop();
    this.events.stopProgress();
    this.creation.stop();
    if (this.started) await this.spans.close();
    this.started = false;
    await this.store.close();
  }

  // ---- creation and reads -------------------------------------------------------------------------------------

  /** Creates a task; resolves only once the store has it. `created` is false when an idempotent retry matched. */
  create(input: CreateTaskInput): Promise<{ task: TaskRecord; created: boolean }> {
    return this.creation.create(input).catch((error: unknown) => {
      if (error instanceof TaskLimitError) this.refusals.note(input.owner, error.limit);
      throw error;
    });
  }

  /** Counts a refusal of the owner's at a limit the engine does not check itself (the server's rate limit). */
  noteRefusal(owner: string, limit: TaskLimitError['limit']): void {
    this.refusals.note(owner, limit);
  }

  /** Owners refused at a limit in this process, most recently refused first (bounded; the console's owners view). */
  refusedOwners(): Array<{ owner: string; refused: Partial<Record<TaskLimitError['limit'], number>> }> {
    return this.refusals.entries();
  }

  /** A task visible to `scope`; foreign and missing tasks raise the same error. */
  get(scope: OwnerScope, taskId: string): Promise<TaskRecord> {
    return this.access.readVisible(scope, taskId);
  }

  /** Looks a task up by its idempotency key (SEP-1686 client-chosen ids) within one owner. */
  async getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord> {
    const record = await this.access.guard(() => this.store.getByIdempotencyKey(owner, key));
    return this.access.visible(record, owner, key);
  }

  /** The task's transitions, oldest first (bounded per task: `limits.timelineEntries`). */
  async timeline(scope: OwnerScope, taskId: string): Promise<TimelineEntry[]> {
    await this.get(scope, taskId);
    return this.access.guard(() => this.access.timelines.read(taskId));
  }

  /**
   * Appends entries no stored write derives (how a run ended, a re-run's link, who answered from the console) to a
   * task's timeline. A failed append is logged, never thrown: what it records has happened already.
   */
  async recordTimeline(taskId: string, entries: TimelineEntry[]): Promise<void> {
    await this.access.timelines.append(taskId, entries);
  }

  /** EngineHandle.runEnded: the run's end on the timeline, and for a run told to stop, on the lifecycle hook. */
  async runEnded(task: TaskRecord, entry: TimelineEntry): Promise<void> {
    // A run that stopped for a deleted or swept task writes nothing: its timeline went with it.
    if (entry.ran !== 'finished' && !(await this.store.get(task.taskId).catch(() => undefined))) return;
    await this.recordTimeline(task.taskId, [entry]);
    if (entry.kind === 'run_overdue') this.access.emit({ type: 'run_overdue', task, graceMs: entry.graceMs ?? 0 });
    else if (entry.ran === 'aborted') this.access.emit({ type: 'run_stopped', task, stopMs: entry.stopMs ?? 0 });
  }

  /** One page of the owner's tasks, newest first. */
  async list(owner: string, options: { cursor?: string; limit?: number } = {}): Promise<ListResult> {
    const now = this.clock.now();
    const limit = Math.max(1, Math.min(options.limit ?? this.limits.listPageSize, 1000));
    const after = options.cursor === undefined ? undefined : this.cursorCodec().decode(owner, options.cursor, now);
    const rows = await this.access.guard(() =>
      this.store.list(owner, { limit: limit + 1, now, ...(after !== undefined && { after }) }),
    );
    const tasks = rows.slice(0, limit);
    const last = tasks[tasks.length - 1];
    // spec R46: nextCursor only when more tasks remain.
    if (rows.length > limit && last) return { tasks, nextCursor: this.cursorCodec().encode(owner, last, now) };
    return { tasks };
  }

  // ---- requestor-driven transitions ---------------------------------------------------------------------------

  /** Moves a non-terminal task to `cancelled` before returning it (spec R50); pending input is dropped. */
  async cancel(
    scope: OwnerScope,
    taskId: string,
    statusMessage = 'The task was cancelled by request.',
    by?: string,
  ): Promise<TaskRecord> {
    await this.get(scope, taskId);
    const cancelledBy = by ?? (scope === ANY_OWNER ? 'requestor' : scope);
    const { record: next } = await this.update(taskId, (record) =>
      transitions.cancel(record, this.clock.now(), statusMessage, cancelledBy),
    );
    this.logger.info({ taskId, owner: next.owner }, 'task cancelled');
    this.access.emit({ type: 'finished', task: next });
    return next;
  }

  /** Deletes a task of `scope`. Waiters see it disappear; running work is aborted by its executor. */
  async delete(scope: OwnerScope, taskId: string): Promise<void> {
    const record = await this.get(scope, taskId);
    await this.access.guard(() => this.store.delete(record.taskId));
    await this.access.removeAttached(record.taskId);
    await this.access.publish(taskId);
    this.logger.info({ taskId, owner: record.owner }, 'task deleted');
    this.access.emit({ type: 'deleted', task: record });
  }

  /** Records answers to outstanding input requests and open offers of a task of `scope` (TaskInputs.answer). */
  async answerInput(
    scope: OwnerScope,
    taskId: string,
    answers: Record<string, InputAnswer>,
  ): Promise<{ accepted: string[] }> {
    return this.inputs.answer(answers, () => this.get(scope, taskId));
  }

  // ---- work-driven transitions (executors; not owner-scoped) --------------------------------------------------

  /**
   * Claims a task for a run: sets the runner and lease and counts the attempt. Undefined when it is gone or over, or
   * when `attempt` is given and is not the next one.
   */
  async markStarted(
    taskId: string,
    runner: string,
    attempt?: number,
    known?: TaskRecord,
  ): Promise<TaskRecord | undefined> {
    try {
      const { record, changed } = await this.update(
        taskId,
        (current) => transitions.claim(current, runner, this.clock.now(), this.leaseMs, attempt),
        known,
      );
      return changed ? record : undefined;
    } catch (error) {
      if (error instanceof TaskNotFoundError) return undefined;
      throw error;
    }
  }

  // ---- what the work asks of its requestor (TaskInputs) -------------------------------------------------------

  /**
   * Adds outstanding input requests and moves the task to `input_required` (spec R23). Returns their keys. With
   * `attempt` (the asking run), throws StaleLeaseError once a later claim superseded that run.
   */
  requestInput(taskId: string, requests: InputRequest[], attempt?: number): Promise<string[]> {
    return this.inputs.requestInput(taskId, requests, attempt);
  }

  /** Asks one question for the run `attempt` and waits for its answer, through outages and lost writes (askForInput). */
  askForInput(taskId: string, request: InputRequest, attempt: number, signal: AbortSignal): Promise<InputAnswer> {
    const parts = { inputs: this.inputs, waiting: this.waiting, logger: this.logger };
    return askForInput(parts, taskId, request, attempt, signal);
  }

  /** Parks a task for input without holding its work in memory (TaskInputs.suspend); `attempt` as for requestInput. */
  suspend(
    taskId: string,
    requests: InputRequest[],
    metaFor: (keys: string[]) => Record<string, unknown>,
    attempt?: number,
  ): Promise<string[]> {
    return this.inputs.suspend(taskId, requests, metaFor, attempt);
  }

  /** Suspends a workflow run until a durable timer and/or answers (TaskInputs.park). */
  park(taskId: string, attempt: number, options: transitions.ParkOptions): Promise<string[]> {
    return this.inputs.park(taskId, attempt, options);
  }

  /** Registers the standing offer `key` of the run `attempt` (the first offer of a key stands); see offers.ts. */
  offer(taskId: string, attempt: number, key: string, request: InputRequest): Promise<void> {
    return this.inputs.offer(taskId, attempt, key, request);
  }

  /** Drops the answer to the offer `key` once the run `attempt` has journaled that it consumed it. */
  consumeOffer(taskId: string, attempt: number, key: string): Promise<void> {
    return this.inputs.consumeOffer(taskId, attempt, key);
  }

  /** Withdraws an outstanding input request (the work stopped waiting for it). */
  withdrawInput(taskId: string, key: string): Promise<void> {
    return this.inputs.withdrawInput(taskId, key);
  }

  /** Fires a durable timer (see TaskMaintenance.wake). True when this call resumed the task. */
  wake(entry: WakeEntry): Promise<boolean> {
    return this.maintenance.wake(entry);
  }

  /** Merges `meta` into a task that has not ended: state its work needs if it runs again (e.g. after recovery). */
  async annotate(taskId: string, meta: Record<string, unknown>): Promise<void> {
    await this.update(taskId, (record) => transitions.annotate(record, meta));
  }

  async setStatusMessage(
    taskId: string,
    statusMessage: string,
    attempt?: number,
    known?: TaskRecord,
  ): Promise<TaskRecord> {
    const update = await this.update(
      taskId,
      (record) =>
        transitions.superseded(record, attempt) ? null : transitions.setStatusMessage(record, statusMessage),
      known,
    );
    return update.record;
  }

  /**
   * Stores the work's latest progress (and its message as the statusMessage) in one write; ignored once terminal, and,
   * with `attempt` (the reporting run), once a later claim superseded that run (so is `setStatusMessage`).
   */
  async reportProgress(
    taskId: string,
    update: ProgressUpdate,
    attempt?: number,
    known?: TaskRecord,
  ): Promise<TaskRecord> {
    const { record, changed } = await this.update(
      taskId,
      (record) => (transitions.superseded(record, attempt) ? null : transitions.reportProgress(record, update)),
      known,
    );
    if (changed) this.events.recordProgress(record); // a progress event where the wire has no progress on tasks
    return record;
  }

  /** Moves an `input_required` task back to `working` (e.g. a multi-round-trip tool re-invoked with its answers). */
  async resume(taskId: string): Promise<TaskRecord> {
    return (await this.update(taskId, (record) => transitions.resume(record))).record;
  }

  /**
   * Stores the outcome exactly and ends the task: a JSON-RPC error or a result ends it `failed` or `completed`
   * according to the dialect's policy. Returns false when the task was already terminal (spec R51: a cancelled
   * task stays cancelled) or is gone, or when `attempt` (the run recording it) is no longer the task's latest claim.
   */
  async complete(
    taskId: string,
    outcome: TaskOutcome,
    statusMessage?: string,
    known?: TaskRecord,
    attempt?: number,
    /** The run's last report of itself, written with the outcome (see ReportedStatus). */
    reported?: ReportedStatus,
    /** Timeline entries written with the outcome, in the same write where the store can (the run's end). */
    entries?: TimelineEntry[],
  ): Promise<boolean> {
    const capped = capOutcome(this.limits, outcome);
    if (capped) {
      // An unbounded blob is never stored: the task fails with a message saying why, and the result is dropped.
      this.logger.warn(
        { taskId, bytes: capped.bytes, maxBytes: this.limits.maxResultBytes },
        'task result over the size cap',
      );
      ({ outcome, statusMessage } = capped);
    }
    try {
      const final = outcome;
      const { record: next, changed } = await this.update(
        taskId,
        (record) => transitions.complete(record, final, this.clock.now(), statusMessage, attempt, reported),
        known,
        entries,
      );
      if (changed) {
        this.logger.info({ taskId, owner: next.owner, status: next.status }, 'task finished');
        this.access.emit({ type: 'finished', task: next });
      }
      return changed;
    } catch (error) {
      if (error instanceof TaskNotFoundError) return false;
      throw error;
    }
  }

  /** Fails a task with a diagnostic statusMessage (spec R61) and, optionally, the JSON-RPC error to return for it. */
  async fail(taskId: string, statusMessage: string, error?: JsonRpcErrorObject): Promise<boolean> {
    const outcome: TaskOutcome = {
      kind: 'error',
      error: error ?? { code: INTERNAL_ERROR_CODE, message: statusMessage },
    };
    return this.complete(taskId, outcome, statusMessage);
  }

  // ---- the task's event log (TaskEvents) ---------------------------------------------------------------------------

  /**
   * Appends an event the task's work emitted to its log (bounded: `limits.eventsPerTask`, `limits.maxEventBytes`;
   * checked by `checkEvent`) and announces it on the log's topic. A keyed emit seen before stores nothing. Throws
   * TaskEventRejectedError when refused; with `attempt`, StaleLeaseError once a later run took the task over.
   */
  emitEvent(taskId: string, event: EmittedEvent, attempt?: number): Promise<{ seq: number; duplicate: boolean }> {
    return this.events.emit(taskId, event, attempt);
  }

  /** Up to `limit` entries of the log of a task of `scope`, from `from`; foreign and missing tasks raise alike. */
  async readEvents(scope: OwnerScope, taskId: string, from: number, limit: number): Promise<LoggedEvent[]> {
    await this.get(scope, taskId);
    return this.events.read(taskId, from, limit);
  }

  /** How many entries the log of a task of `scope` holds (the `seq` its next entry gets). */
  async eventCount(scope: OwnerScope, taskId: string): Promise<number> {
    await this.get(scope, taskId);
    return this.events.length(taskId);
  }

  /** Whether the store keeps event logs (all four stores do). */
  get keepsEvents(): boolean {
    return this.events.kept;
  }

  /**
   * Hears every entry appended to any task's log in this process (the emitting one: a queue worker for its tasks'
   * emits). Returns the removal. Readers in other processes listen on `eventLogTopic(taskId)` instead.
   */
  onEventAppended(listener: EventAppendedListener): () => void {
    return this.events.onAppended(listener);
  }

  /**
   * Hears each task this process removes: deleted, swept at its TTL, or evicted (what a subscription to it rests on
   * is gone). Returns the removal. Another process's removals are not heard here.
   */
  onTaskRemoved(listener: (taskId: string) => void): () => void {
    this.access.removedListeners.add(listener);
    return () => this.access.removedListeners.delete(listener);
  }

  // ---- waiting (TaskWaiting) ------------------------------------------------------------------------------------

  /** Calls `listener` with the current record (or undefined once gone) after every change of the task. */
  observe(
    taskId: string,
    listener: (record: TaskRecord | undefined) => void,
    wants?: (change: TaskChange) => boolean,
  ): () => void {
    return this.waiting.observe(taskId, listener, wants);
  }

  /**
   * Resolves with the task once its version is past `sinceVersion`, or undefined once it is gone. Wakes on events;
   * re-reads every `recheckIntervalMs` in case an event was lost.
   */
  waitForChange(
    taskId: string,
    sinceVersion: number,
    signal?: AbortSignal,
    /** Begun (with `watch`) before the caller read `sinceVersion`: spares the wait its first read. */
    watch?: TaskWatch,
  ): Promise<TaskRecord | undefined> {
    return this.waiting.waitForChange(taskId, sinceVersion, signal, watch);
  }

  /**
   * Starts hearing the task's events, to be begun before a read whose version a `waitForChange` then waits past.
   * Stop it when done. It reveals nothing about the task: the caller's read decides whether the caller may see it.
   */
  watch(taskId: string): TaskWatch {
    return watchTask(this.store.events, taskId);
  }

  /** Resolves with the task once it is terminal, or undefined once it is gone (expired or deleted). */
  waitForTerminal(taskId: string, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    return this.waiting.waitForTerminal(taskId, signal);
  }

  /**
   * Records that a terminal task's outcome was delivered to its requestor (`tasks/result` or its equivalent): at a
   * stored-task bound such tasks are evicted, the earliest fetched first, before a creation is refused. Never throws.
   */
  resultDelivered(record: TaskRecord): Promise<void> {
    return this.room.delivered(record);
  }

  /** Waits for the answer to `key`, removes it from the task and returns it. */
  async awaitInputAnswer(taskId: string, key: string, signal?: AbortSignal): Promise<InputAnswer> {
    // Without an attempt a missing request throws, so an answer always comes back.
    return (await this.waiting.awaitInputAnswer(taskId, key, signal)) as InputAnswer;
  }

  // ---- background maintenance (TaskMaintenance) -----------------------------------------------------------------

  /** Removes expired tasks in batches; work still running for them is aborted through their events. */
  sweep(batch = 500): Promise<number> {
    return this.maintenance.sweep(batch);
  }

  /** Finds tasks whose runner stopped renewing its lease and applies the recovery policy to each. */
  recover(): Promise<{ failed: number; rerun: number }> {
    return this.maintenance.recover();
  }

  /** Extends this runner's leases; executors call it while they hold tasks. */
  renewLeases(runner: string): Promise<void> {
    return this.maintenance.renewLeases(runner);
  }

  isExpired(record: TaskRecord, now: number): boolean {
    return transitions.isExpired(record, now);
  }

  // ---- internals ------------------------------------------------------------------------------------------------

  private update(
    taskId: string,
    change: (record: TaskRecord) => TaskRecord | null,
    known?: TaskRecord,
    entries?: TimelineEntry[],
  ) {
    return this.access.update(taskId, change, known, entries);
  }

  /** Stores that `holder` let the task's span go; the record now stored (undefined once gone). */
  private async releaseSpan(taskId: string, holder: string): Promise<TaskRecord | undefined> {
    try {
      return (await this.update(taskId, (record) => releaseSpanHolder(record, holder))).record;
    } catch (error) {
      if (error instanceof TaskNotFoundError) return undefined;
      throw error;
    }
  }

  /** The lease a task gets when handed to an executor that leases on hand-over (in-process); none for a queue. */
  private leaseOnHandover(now: number): LeaseGrant | undefined {
    const executor = this.executor;
    return executor?.leasesOnCreate ? { runner: executor.runnerId, until: now + this.leaseMs } : undefined;
  }

  private cursorCodec(): CursorCodec {
    if (!this.cursors) throw new StoreUnavailableError('The task engine has not been started');
    return this.cursors;
  }
}
