import type { Clock } from '../contracts/Clock.js';
import type { EngineLogger } from '../contracts/EngineHooks.js';
import { eventLogTopic, type LoggedEvent } from '../contracts/TaskEventLog.js';
import { StoreUnavailableError, TaskEventRejectedError } from '../record/TaskError.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';
import { superseded } from '../record/transitions.js';
import { StaleLeaseError } from '../run/StepJournal.js';
import { jsonBytes } from '../util/jsonBytes.js';
import type { EngineLimits } from './EngineLimits.js';
import type { TaskAccess } from './TaskAccess.js';

/**
 * The event type under which the runtime records each status change of a task in its event log (data: `taskId`,
 * `status`, `statusMessage`), so a subscriber learns that a task finished without polling it. Vendor-prefixed
 * (spec TE3): unprefixed names are reserved for MCP.
 */
export const TASK_STATUS_EVENT = 'io.github.mcp-tasks.task_status';

/**
 * The event type under which the runtime records a task's progress reports (data: `taskId`, `progress`, `total`,
 * `message`), so a subscriber sees progress where the wire forbids progress notifications on tasks (the 2026 tasks
 * extension). Coalesced (PROGRESS_EVENT_INTERVAL_MS) and bounded to half of `limits.eventsPerTask`.
 */
export const TASK_PROGRESS_EVENT = 'io.github.mcp-tasks.progress';

/**
 * At most one progress entry per task this often, per process: a report within the interval waits for its end, and
 * only the latest report waiting is logged then, so a chatty tool costs one entry a second.
 */
export const PROGRESS_EVENT_INTERVAL_MS = 1_000;

/** What a task's work emits: an event of a registered type; `key` makes a replayed emit a no-op. */
export interface EmittedEvent {
  type: string;
  data: Record<string, unknown>;
  key?: string;
}

/**
 * Checks an emitted event against its type (registered, data valid per its payloadSchema); throws a
 * TaskEventRejectedError when it does not fit. The events layer supplies it.
 */
export type EventCheck = (type: string, data: Record<string, unknown>) => void;

/** Called in the appending process with each entry stored in a task's log (webhook outboxes hook in here). */
export type EventAppendedListener = (task: TaskRecord, event: LoggedEvent) => void;

/** Longest event type name accepted. */
const MAX_TYPE_LENGTH = 200;

/**
 * Each task's event log as the engine keeps it: the work's emits (checked, bounded, keyed), the runtime's status
 * entries, reads for poll and push, and the announcement of every append on the task's event log topic, in every
 * process sharing the store.
 */
export class TaskEvents {
  private readonly listeners = new Set<EventAppendedListener>();
  /** Tasks whose progress entry was logged within the interval: the latest report waiting, and the interval's end. */
  private readonly progressHeld = new Map<string, { pending?: TaskRecord; timer: ReturnType<typeof setTimeout> }>();

  constructor(
    private readonly access: TaskAccess,
    private readonly clock: Clock,
    private readonly logger: EngineLogger,
    private readonly limits: EngineLimits,
    private readonly options: { check?: EventCheck; statusEvents: boolean },
  ) {}

  async init(): Promise<void> {
    await this.access.store.eventLog?.init();
  }

  /**
   * Appends an event the work of `taskId` emitted (`attempt`: the emitting run; a superseded run's emit throws
   * StaleLeaseError). Returns its `seq`; a keyed emit seen before stores nothing and returns the first one's.
   */
  async emit(taskId: string, event: EmittedEvent, attempt?: number): Promise<{ seq: number; duplicate: boolean }> {
    const log = this.logOf();
    const { type, data } = event;
    if (typeof type !== 'string' || type.length === 0 || type.length > MAX_TYPE_LENGTH)
      throw new TaskEventRejectedError('unknown_type', `Event type must be a name of 1 to ${MAX_TYPE_LENGTH} chars`);
    if (typeof data !== 'object' || data === null || Array.isArray(data))
      throw new TaskEventRejectedError('invalid_payload', `Event data of ${type} must be a JSON object`); // spec V20
    const bytes = jsonBytes(data);
    if (bytes > this.limits.maxEventBytes)
      throw new TaskEventRejectedError(
        'too_large',
        `Event data of ${type} too large: ${Number.isFinite(bytes) ? `${bytes} bytes` : 'too deep'}, the limit is ${this.limits.maxEventBytes} bytes`,
      );
    this.options.check?.(type, data); // spec V21
    const task = await this.access.read(taskId);
    if (!task || isTerminal(task.status))
      throw new TaskEventRejectedError('task_ended', `Task ${taskId} has ended; its events are final`);
    if (superseded(task, attempt)) throw new StaleLeaseError(taskId, 'a later run emits its events');
    // A stored copy: what the work holds may change after the emit returns.
    const stored = JSON.parse(JSON.stringify(data)) as Record<string, unknown>;
    const at = this.clock.now();
    const result = await this.access.guard(() =>
      log.append(
        taskId,
        { type, data: stored, at, ...(event.key !== undefined && { key: event.key }) },
        this.limits.eventsPerTask,
      ),
    );
    if (!result.appended && result.reason === 'limit')
      throw new TaskEventRejectedError(
        'events_per_task',
        `Task ${taskId} holds ${this.limits.eventsPerTask} events already (limit eventsPerTask); nothing more is stored`,
      );
    if (!result.appended) return { seq: result.seq, duplicate: true };
    await this.announce(task, { seq: result.seq, type, data: stored, at });
    return { seq: result.seq, duplicate: false };
  }

  /**
   * Records a stored status change in the task's log (when status events are on). The terminal status always finds
   * room (one entry past `eventsPerTask`), so a subscriber sees every task end; a failure is logged, never thrown:
   * the change is stored already.
   */
  async recordStatus(previous: TaskRecord, next: TaskRecord): Promise<void> {
    const log = this.access.store.eventLog;
    if (!this.options.statusEvents || !log || previous.status === next.status) return;
    const terminal = isTerminal(next.status);
    const data = {
      taskId: next.taskId,
      status: next.status,
      ...(next.statusMessage !== undefined && { statusMessage: next.statusMessage }),
    };
    const at = this.clock.now();
    try {
      const result = await log.append(
        next.taskId,
        { type: TASK_STATUS_EVENT, data, at, ...(terminal && { key: 'status:terminal' }) },
        this.limits.eventsPerTask + (terminal ? 1 : 0),
      );
      if (result.appended) await this.announce(next, { seq: result.seq, type: TASK_STATUS_EVENT, data, at });
    } catch (error) {
      this.logger.warn({ taskId: next.taskId, error: String(error) }, 'task status event append failed');
    }
  }

  /**
   * Records a stored progress report in the task's log (when status events are on), coalesced per task: the first
   * report of an interval at once, the latest of the rest at its end. Progress entries stop once the log holds half
   * of `eventsPerTask`, so the work's own events keep their room. A failure is logged, never thrown.
   */
  recordProgress(next: TaskRecord): void {
    if (!this.options.statusEvents || !this.access.store.eventLog || !next.progress) return;
    const held = this.progressHeld.get(next.taskId);
    if (held) {
      held.pending = next;
      return;
    }
    this.holdProgress(next.taskId);
    void this.appendProgress(next);
  }

  /** Ends the coalescing timers (the engine is closing): reports still waiting are not logged. */
  stopProgress(): void {
    for (const held of this.progressHeld.values()) clearTimeout(held.timer);
    this.progressHeld.clear();
  }

  private holdProgress(taskId: string): void {
    const timer = setTimeout(() => {
      const pending = this.progressHeld.get(taskId)?.pending;
      this.progressHeld.delete(taskId);
      if (!pending) return;
      this.holdProgress(taskId);
      void this.access.read(taskId).then(
        // A report that lands after the task ended is not logged: its terminal status entry stays its last.
        (current) => (current && !isTerminal(current.status) ? this.appendProgress(pending) : undefined),
        (error: unknown) => this.logger.warn({ taskId, error: String(error) }, 'task progress event read failed'),
      );
    }, PROGRESS_EVENT_INTERVAL_MS);
    timer.unref?.();
    this.progressHeld.set(taskId, { timer });
  }

  private async appendProgress(next: TaskRecord): Promise<void> {
    const log = this.access.store.eventLog;
    const progress = next.progress;
    if (!log || !progress) return;
    const data = {
      taskId: next.taskId,
      progress: progress.progress,
      ...(progress.total !== undefined && { total: progress.total }),
      ...(progress.message !== undefined && { message: progress.message }),
    };
    const at = this.clock.now();
    try {
      const result = await log.append(
        next.taskId,
        { type: TASK_PROGRESS_EVENT, data, at },
        Math.floor(this.limits.eventsPerTask / 2),
      );
      if (result.appended) await this.announce(next, { seq: result.seq, type: TASK_PROGRESS_EVENT, data, at });
    } catch (error) {
      this.logger.warn({ taskId: next.taskId, error: String(error) }, 'task progress event append failed');
    }
  }

  /** Up to `limit` entries of the task's log from `from` (the caller checked that the task is visible). */
  read(taskId: string, from: number, limit: number): Promise<LoggedEvent[]> {
    const log = this.logOf();
    return this.access.guard(() => log.read(taskId, from, limit));
  }

  /** How many entries the task's log holds: the `seq` of its next one. */
  length(taskId: string): Promise<number> {
    const log = this.logOf();
    return this.access.guard(() => log.length(taskId));
  }

  /** Adds a listener of appends made in this process; returns its removal. */
  onAppended(listener: EventAppendedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get kept(): boolean {
    return this.access.store.eventLog !== undefined;
  }

  private logOf() {
    const log = this.access.store.eventLog;
    if (!log) throw new StoreUnavailableError('The task store keeps no event log');
    return log;
  }

  /** Wakes the log's readers in every process, then this process's listeners. */
  private async announce(task: TaskRecord, event: LoggedEvent): Promise<void> {
    await this.access.publish(eventLogTopic(task.taskId));
    for (const listener of [...this.listeners]) {
      try {
        listener(task, event);
      } catch (error) {
        this.logger.warn({ taskId: task.taskId, error: String(error) }, 'event listener threw');
      }
    }
  }
}
