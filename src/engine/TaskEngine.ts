import { randomBytes, randomUUID } from 'node:crypto';

import { systemClock, type Clock } from './Clock.js';
import { CursorCodec } from './CursorCodec.js';
import type { EngineHandle, Executor } from './Executor.js';
import { defaultRecoveryPolicy, type RecoveryPolicy } from './RecoveryPolicy.js';
import { nestsDeeperThan } from './jsonDepth.js';
import { stableJson } from './stableJson.js';
import { StaleLeaseError } from './StepJournal.js';
import type { WakeEntry } from './StepJournalStore.js';
import {
  InvalidTransitionError,
  StoreUnavailableError,
  TaskConflictError,
  TaskExpiredError,
  TaskLimitError,
  TaskNotFoundError,
  TaskTerminalError,
  TaskTooLargeError,
  TaskTooDeepError,
  isTaskError,
} from './TaskError.js';
import { jsonBytes } from './jsonBytes.js';
import type {
  InputAnswer,
  JsonRpcErrorObject,
  PendingInput,
  ProgressUpdate,
  RetentionPolicy,
  RetentionRequest,
  TaskOutcome,
  TaskProgress,
  TaskRecord,
  TaskRequest,
} from './TaskRecord.js';
import { canTransition, isTerminal, type TaskStatus } from './TaskStatus.js';
import type { InsertResult, OwnerLimitKind, OwnerLimits, TaskStore } from './TaskStore.js';
import type { TimelineEntry } from './TaskTimeline.js';
import { DEFAULT_TIMELINE_MAX_ENTRIES } from './TaskTimeline.js';
import { TimelineRecorder } from './TimelineRecorder.js';
import { WakeScheduler } from './WakeScheduler.js';

/**
 * Reads and writes are scoped to an owner; `ANY_OWNER` is for callers whose capability is the task id itself. It
 * reaches only tasks created that way (`reachableById`), never an authenticated principal's (spec R63 R67).
 */
export const ANY_OWNER = Symbol('any-owner');
export type OwnerScope = string | typeof ANY_OWNER;

/** Owners that are authenticated principals start with this (records written before `reachableById` existed). */
export const PRINCIPAL_OWNER_PREFIX = 'principal:';

export interface EngineLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };

/** What happened to a task, for metrics and audit hooks. */
export type TaskLifecycleEvent =
  | { type: 'created' | 'deleted'; task: TaskRecord }
  | { type: 'finished'; task: TaskRecord }
  | { type: 'recovered'; task: TaskRecord; action: 'rerun' | 'fail' };

/** Documented limits and their defaults (see docs/limits.md). */
export interface EngineLimits {
  /** Cap on any requested retention; `null` for no cap. Default 7 days. */
  maxTtlMs: number | null;
  /** Retention when the requestor asks for none. Default 24 hours. */
  defaultTtlMs: number;
  /** Smallest retention granted. Default 1 second. */
  minTtlMs: number;
  /** Non-terminal tasks one owner may hold at once, enforced atomically by the store. Default 100. */
  maxActivePerOwner: number;
  /** Stored tasks (finished ones included) one owner may hold, enforced atomically by the store. Default 10,000. */
  maxStoredPerOwner: number;
  /** Page size of list. Default 50. */
  listPageSize: number;
  /**
   * Size cap (UTF-8 JSON bytes) of what a creation stores from the requestor: the request's params and the dialect's
   * data about it (capabilities, answers sent along). Also caps each input answer. `null`: no cap. Default 1 MiB.
   */
  maxArgumentsBytes: number | null;
  /** Size cap of a stored outcome (result or error); a larger one fails the task instead. `null`: no cap. Default 4 MiB. */
  maxResultBytes: number | null;
  /** Deepest nesting of arrays/objects accepted in a task's request params and in input answers. Default 64. */
  maxJsonDepth: number;
  /** Timeline entries kept per task (the first and the newest); 0 keeps none. Default 200. */
  timelineEntries: number;
}

export const DEFAULT_LIMITS: EngineLimits = {
  maxTtlMs: 7 * 24 * 60 * 60 * 1000,
  defaultTtlMs: 24 * 60 * 60 * 1000,
  minTtlMs: 1000,
  maxActivePerOwner: 1000,
  maxStoredPerOwner: 10_000,
  listPageSize: 50,
  maxArgumentsBytes: 1024 * 1024,
  maxResultBytes: 4 * 1024 * 1024,
  maxJsonDepth: 64,
  timelineEntries: DEFAULT_TIMELINE_MAX_ENTRIES,
};

export interface TaskEngineOptions {
  store: TaskStore;
  executor?: Executor;
  clock?: Clock;
  limits?: Partial<EngineLimits>;
  /** How long a runner's claim on a task lasts without renewal; bounds how late a dead runner is noticed. Default 15 s. */
  leaseMs?: number;
  /** Interval of the expiry sweeper. Default 60 s; 0 disables it. */
  sweepIntervalMs?: number;
  /** Interval of the dead-runner scan. Default: `leaseMs`; 0 disables it. */
  recoveryIntervalMs?: number;
  /** Waiters re-read the store this often in case an event was lost. Default 5 s. */
  recheckIntervalMs?: number;
  /** Age after which a list cursor is refused as stale. Default 1 hour. */
  cursorTtlMs?: number;
  /** How often durable timers (sleeps, retries, question deadlines) are read from the store. Default 1 s; 0 disables. */
  wakeIntervalMs?: number;
  recoveryPolicy?: RecoveryPolicy;
  logger?: EngineLogger;
  /** Called after each lifecycle change is stored (creation, every terminal status, deletion, recovery). */
  onLifecycle?: (event: TaskLifecycleEvent) => void;
}

export interface CreateTaskInput {
  owner: string;
  /** Whether any caller holding the task id reaches the task (`ANY_OWNER`); only without authentication. Default false. */
  reachableById?: boolean;
  request: TaskRequest;
  dialect: string;
  /** The requested retention; clamped to the limits, the actual value is on the returned task. */
  retention?: RetentionRequest;
  pollIntervalMs?: number;
  idempotencyKey?: string;
  progressToken?: string | number;
  toolErrorStatus?: 'failed' | 'completed';
  retrySafe?: boolean;
  statusMessage?: string;
  meta?: Record<string, unknown>;
  /** Hand the task to the executor once durable. Default true when the engine has an executor. */
  run?: boolean;
}

export interface ListResult {
  tasks: TaskRecord[];
  nextCursor?: string;
}

/** The task engine: dialect-neutral lifecycle, owner scoping, expiry, waiting and recovery over a TaskStore. */
export class TaskEngine implements EngineHandle {
  readonly store: TaskStore;
  readonly clock: Clock;
  readonly limits: EngineLimits;
  readonly leaseMs: number;
  private executor: Executor | undefined;
  private readonly logger: EngineLogger;
  private readonly onLifecycle: ((event: TaskLifecycleEvent) => void) | undefined;
  private readonly recoveryPolicy: RecoveryPolicy;
  private readonly sweepIntervalMs: number;
  private readonly recoveryIntervalMs: number;
  private readonly recheckIntervalMs: number;
  private readonly cursorTtlMs: number;
  private readonly wakeIntervalMs: number;
  private wakes: WakeScheduler | undefined;
  private readonly timelines: TimelineRecorder;
  private cursors: CursorCodec | undefined;
  private readonly creating = new Map<string, Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private started = false;

  constructor(options: TaskEngineOptions) {
    this.store = options.store;
    this.executor = options.executor;
    this.clock = options.clock ?? systemClock;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.leaseMs = options.leaseMs ?? 15_000;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.recoveryIntervalMs = options.recoveryIntervalMs ?? this.leaseMs;
    this.recheckIntervalMs = options.recheckIntervalMs ?? 5_000;
    this.cursorTtlMs = options.cursorTtlMs ?? 60 * 60 * 1000;
    this.wakeIntervalMs = options.wakeIntervalMs ?? 1000;
    this.recoveryPolicy = options.recoveryPolicy ?? defaultRecoveryPolicy();
    this.logger = options.logger ?? silentLogger;
    this.onLifecycle = options.onLifecycle;
    this.timelines = new TimelineRecorder(this.store, this.limits.timelineEntries, this.logger);
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
    await this.timelines.init();
    this.cursors = new CursorCodec(await this.store.getSecret(), this.cursorTtlMs);
    this.started = true;
    await this.recover();
    if (this.sweepIntervalMs > 0) this.every(this.sweepIntervalMs, () => this.sweep());
    if (this.recoveryIntervalMs > 0) this.every(this.recoveryIntervalMs, () => this.recover());
    if (this.store.journal && this.wakeIntervalMs > 0) {
      const onError = (error: unknown) => this.logger.error({ error: String(error) }, 'durable timer failed');
      this.wakes = new WakeScheduler(
        this.store.journal,
        (entry) => this.wake(entry),
        this.wakeIntervalMs,
        this.clock,
        onError,
      );
      this.wakes.start();
    }
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.wakes?.stop();
    this.wakes = undefined;
    this.started = false;
    await this.store.close();
  }

  // ---- creation and reads -------------------------------------------------------------------------------------

  /** Creates a task; resolves only once the store has it. `created` is false when an idempotent retry matched. */
  async create(input: CreateTaskInput): Promise<{ task: TaskRecord; created: boolean }> {
    // Serializing a hostile depth would overflow the stack inside the store and read as a store failure.
    this.checkDepth('params', input.request.params);
    if (input.meta) this.checkDepth('params', input.meta);
    // Refused before anything is queued or stored, and before waiting behind the owner's other creations.
    this.checkSize('arguments', { request: input.request, meta: input.meta ?? {} });
    // One owner's creations run one at a time in this process, so racing creations do not queue work for tasks the
    // store then refuses; the store enforces the per-owner caps atomically across processes.
    const previous = this.creating.get(input.owner) ?? Promise.resolve();
    const current = previous.then(
      () => this.createNow(input),
      () => this.createNow(input),
    );
    const settled = current.then(
      () => undefined,
      () => undefined,
    );
    this.creating.set(input.owner, settled);
    void settled.then(() => {
      if (this.creating.get(input.owner) === settled) this.creating.delete(input.owner);
    });
    return current;
  }

  private async createNow(input: CreateTaskInput): Promise<{ task: TaskRecord; created: boolean }> {
    const now = this.clock.now();
    if (input.idempotencyKey !== undefined) {
      const existing = await this.matchIdempotent(input, now);
      if (existing) return { task: existing, created: false };
    }
    const retention = this.clampRetention(input.retention);
    const leases = this.executor?.leasesOnCreate ?? false;
    const record: TaskRecord = {
      taskId: randomUUID(),
      owner: input.owner,
      reachableById: input.reachableById ?? false,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      retention,
      expiresAt: retention.kind === 'ttl' && retention.ttlMs !== null ? now + retention.ttlMs : null,
      request: input.request,
      inputRequests: {},
      inputAnswers: {},
      nextInputSeq: 1,
      dialect: input.dialect,
      toolErrorStatus: input.toolErrorStatus ?? 'failed',
      retrySafe: input.retrySafe ?? false,
      attempts: 0,
      meta: input.meta ?? {},
      version: 1,
    };
    if (input.statusMessage !== undefined) record.statusMessage = input.statusMessage;
    if (input.pollIntervalMs !== undefined) record.pollIntervalMs = input.pollIntervalMs;
    if (input.idempotencyKey !== undefined) record.idempotencyKey = input.idempotencyKey;
    if (input.progressToken !== undefined) record.progressToken = input.progressToken;
    if (leases && this.executor) {
      record.runner = this.executor.runnerId;
      record.leaseUntil = now + this.leaseMs;
    }
    const run = (input.run ?? true) && this.executor !== undefined;
    // A job queued for a task the store then refuses would be dropped by its worker; an early count avoids most.
    if (run && !leases) await this.checkActive(input.owner);
    // A queue is told first: if this process dies right after the insert, the work is already queued, so a task is
    // never stored without a run on its way. A job that finds no task (the insert never happened) is dropped.
    if (run && !leases) await this.guard(async () => this.executor?.submit(record));
    const result = await this.insertCapped(record);
    if (!result.inserted) {
      if (result.reason === 'duplicate_key' && input.idempotencyKey !== undefined) {
        const existing = await this.matchIdempotent(input, now);
        if (existing) return { task: existing, created: false };
      }
      // A 122-bit random id collided, or the key's holder vanished between reads: retry once with fresh state.
      return this.createNow(input);
    }
    await this.timelines.record(undefined, record);
    this.logger.info({ taskId: record.taskId, owner: record.owner, method: record.request.method }, 'task created');
    this.emit({ type: 'created', task: record });
    if (run && leases) await this.executor?.submit(record);
    return { task: record, created: true };
  }

  /** Inserts under the per-owner caps (spec R70); a stored-task refusal first sweeps expired tasks once. */
  private async insertCapped(record: TaskRecord): Promise<Exclude<InsertResult, { reason: 'limit' }>> {
    const limits: OwnerLimits = {
      maxActive: this.limits.maxActivePerOwner,
      maxStored: this.limits.maxStoredPerOwner,
    };
    let result = await this.guard(() => this.store.insert(record, limits));
    // Expired tasks count until they are swept: sweep now rather than refuse for tasks nobody can see any more.
    if (!result.inserted && result.reason === 'limit' && result.limit === 'stored' && (await this.sweep()) > 0) {
      result = await this.guard(() => this.store.insert(record, limits));
    }
    if (!result.inserted && result.reason === 'limit') throw this.limitError(result.limit);
    return result;
  }

  private async checkActive(owner: string): Promise<void> {
    const active = await this.guard(() => this.store.countActive(owner));
    if (active >= this.limits.maxActivePerOwner) throw this.limitError('active');
  }

  private limitError(limit: OwnerLimitKind): TaskLimitError {
    if (limit === 'active') {
      return new TaskLimitError(
        'concurrent_tasks',
        `Too many active tasks for this caller (limit ${this.limits.maxActivePerOwner}); wait for some to finish or cancel them`,
      );
    }
    return new TaskLimitError(
      'stored_tasks',
      `Too many stored tasks for this caller (limit ${this.limits.maxStoredPerOwner}, finished tasks included); wait for finished tasks to expire or delete them`,
    );
  }

  /** A task visible to `scope`; foreign and missing tasks raise the same error. */
  async get(scope: OwnerScope, taskId: string): Promise<TaskRecord> {
    const record = await this.guard(() => this.store.get(taskId));
    return this.visible(record, scope, taskId);
  }

  /** Looks a task up by its idempotency key (SEP-1686 client-chosen ids) within one owner. */
  async getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord> {
    const record = await this.guard(() => this.store.getByIdempotencyKey(owner, key));
    return this.visible(record, owner, key);
  }

  /** The task's transitions, oldest first (bounded per task: `limits.timelineEntries`). */
  async timeline(scope: OwnerScope, taskId: string): Promise<TimelineEntry[]> {
    await this.get(scope, taskId);
    return this.guard(() => this.timelines.read(taskId));
  }

  /** One page of the owner's tasks, newest first. */
  async list(owner: string, options: { cursor?: string; limit?: number } = {}): Promise<ListResult> {
    const now = this.clock.now();
    const limit = Math.max(1, Math.min(options.limit ?? this.limits.listPageSize, 1000));
    const after = options.cursor === undefined ? undefined : this.cursorCodec().decode(owner, options.cursor, now);
    const rows = await this.guard(() =>
      this.store.list(owner, { limit: limit + 1, now, ...(after !== undefined && { after }) }),
    );
    const tasks = rows.slice(0, limit);
    const last = tasks[tasks.length - 1];
    // spec R46: nextCursor only when more tasks remain.
    if (rows.length > limit && last) {
      return { tasks, nextCursor: this.cursorCodec().encode(owner, last, now) };
    }
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
    const next = await this.mutate(taskId, (record) => {
      // spec R49: a terminal task cannot be cancelled.
      if (isTerminal(record.status)) throw new TaskTerminalError(taskId, record.status);
      record.cancelledBy = by ?? (scope === ANY_OWNER ? 'requestor' : scope);
      return this.toTerminal(record, 'cancelled', statusMessage);
    });
    this.logger.info({ taskId, owner: next.owner }, 'task cancelled');
    this.emit({ type: 'finished', task: next });
    return next;
  }

  /** Deletes a task of `scope`. Waiters see it disappear; running work is aborted by its executor. */
  async delete(scope: OwnerScope, taskId: string): Promise<void> {
    const record = await this.get(scope, taskId);
    await this.guard(() => this.store.delete(record.taskId));
    await this.guard(async () => this.store.journal?.remove(record.taskId));
    await this.guard(() => this.timelines.remove(record.taskId));
    await this.publish(taskId);
    this.logger.info({ taskId, owner: record.owner }, 'task deleted');
    this.emit({ type: 'deleted', task: record });
  }

  /**
   * Records answers to outstanding input requests. Keys that are not outstanding are ignored (spec E12);
   * once none remain, the task returns to `working` (spec R26).
   */
  async answerInput(
    scope: OwnerScope,
    taskId: string,
    answers: Record<string, InputAnswer>,
  ): Promise<{ accepted: string[] }> {
    for (const answer of Object.values(answers)) this.checkDepth('input', answer);
    await this.get(scope, taskId);
    for (const answer of Object.values(answers)) this.checkSize('input', answer);
    let accepted: string[] = [];
    let resumed = false;
    const next = await this.mutate(taskId, (record) => {
      resumed = false;
      if (isTerminal(record.status)) return null;
      accepted = Object.keys(answers).filter((key) => key in record.inputRequests);
      if (accepted.length === 0) return null;
      for (const key of accepted) {
        delete record.inputRequests[key];
        record.inputAnswers[key] = answers[key] as InputAnswer;
      }
      if (Object.keys(record.inputRequests).length === 0 && record.status === 'input_required') {
        this.transition(record, 'working');
        if (record.suspended) {
          // The suspended work runs again with the answers; whoever completed the set hands it over.
          resumed = true;
          delete record.suspended;
          delete record.wakeAt;
          if (this.executor?.leasesOnCreate) {
            record.runner = this.executor.runnerId;
            record.leaseUntil = this.clock.now() + this.leaseMs;
          }
        }
      }
      return record;
    });
    if (resumed) await this.executor?.submit(next);
    return { accepted };
  }

  // ---- work-driven transitions (executors; not owner-scoped) --------------------------------------------------

  /**
   * Claims a task for a run: sets the runner and lease and counts the attempt. Undefined when it is gone or over, or
   * when `attempt` is given and is not the next one.
   */
  async markStarted(taskId: string, runner: string, attempt?: number): Promise<TaskRecord | undefined> {
    try {
      let claimed = false;
      const record = await this.mutate(taskId, (current) => {
        claimed = false;
        if (isTerminal(current.status)) return null;
        // With an attempt number only that run may claim: two workers holding the same job cannot both start it.
        if (attempt !== undefined && current.attempts + 1 !== attempt) return null;
        const now = this.clock.now();
        current.runner = runner;
        current.leaseUntil = now + this.leaseMs;
        current.startedAt = now;
        current.attempts += 1;
        claimed = true;
        return current;
      });
      return claimed ? record : undefined;
    } catch (error) {
      if (error instanceof TaskNotFoundError) return undefined;
      throw error;
    }
  }

  /** Adds outstanding input requests and moves the task to `input_required` (spec R23). Returns their keys. */
  async requestInput(
    taskId: string,
    requests: Array<{ method: string; params?: Record<string, unknown> }>,
  ): Promise<string[]> {
    let keys: string[] = [];
    await this.mutate(taskId, (record) => {
      keys = this.addInputRequests(record, requests);
      return record;
    });
    return keys;
  }

  /**
   * Parks a task for input without holding its work in memory: adds the requests, moves it to `input_required`,
   * merges `meta`, drops the runner's lease (nothing runs, so nothing can be stale) and clears earlier answers.
   */
  async suspend(
    taskId: string,
    requests: Array<{ method: string; params?: Record<string, unknown> }>,
    metaFor: (keys: string[]) => Record<string, unknown>,
  ): Promise<string[]> {
    let keys: string[] = [];
    await this.mutate(taskId, (record) => {
      record.inputAnswers = {};
      keys = this.addInputRequests(record, requests);
      record.meta = { ...record.meta, ...metaFor(keys) };
      record.suspended = true;
      delete record.runner;
      delete record.leaseUntil;
      return record;
    });
    return keys;
  }

  /**
   * Suspends the run `attempt` of a workflow task so that it holds nothing (no runner, lease or memory): until `wakeAt`
   * (a durable timer any instance honours) and/or until `requests` are answered (`input_required`, as for `suspend`).
   * Whichever comes first runs the work again from the top. Throws StaleLeaseError for a superseded attempt.
   */
  async park(
    taskId: string,
    attempt: number,
    options: {
      wakeAt?: number;
      requests?: Array<{ method: string; params?: Record<string, unknown> }>;
      metaFor?: (keys: string[]) => Record<string, unknown>;
    },
  ): Promise<string[]> {
    const { wakeAt, requests = [] } = options;
    // The timer goes in first: a crash before the record is written leaves a timer that finds nothing to wake.
    if (wakeAt !== undefined) await this.guard(async () => this.store.journal?.setWake(taskId, wakeAt));
    let keys: string[] = [];
    await this.mutate(taskId, (record) => {
      keys = [];
      if (isTerminal(record.status)) return null;
      if (record.attempts !== attempt) throw new StaleLeaseError(taskId, `attempt ${attempt} was superseded`);
      record.inputAnswers = {};
      if (requests.length > 0) keys = this.addInputRequests(record, requests);
      if (options.metaFor) record.meta = { ...record.meta, ...options.metaFor(keys) };
      record.suspended = true;
      if (wakeAt === undefined) delete record.wakeAt;
      else record.wakeAt = wakeAt;
      delete record.runner;
      delete record.leaseUntil;
      return record;
    });
    if (wakeAt !== undefined) this.wakes?.schedule({ taskId, wakeAt });
    return keys;
  }

  /**
   * Fires a durable timer: a task still parked until then goes back to `working` (unanswered questions are withdrawn)
   * and to the executor. Timers of tasks that moved on are cleared. True when this call resumed the task.
   */
  async wake(entry: WakeEntry): Promise<boolean> {
    const { taskId } = entry;
    let woken = false;
    let stale = false;
    try {
      const next = await this.mutate(taskId, (record) => {
        woken = false;
        stale = isTerminal(record.status) || !record.suspended || record.wakeAt !== entry.wakeAt;
        if (stale || (record.wakeAt as number) > this.clock.now()) return null;
        woken = true;
        delete record.suspended;
        delete record.wakeAt;
        if (record.status === 'input_required') {
          record.inputRequests = {};
          this.transition(record, 'working');
        }
        if (this.executor?.leasesOnCreate) {
          record.runner = this.executor.runnerId;
          record.leaseUntil = this.clock.now() + this.leaseMs;
        }
        return record;
      });
      if (woken || stale) await this.guard(async () => this.store.journal?.clearWake(taskId, entry.wakeAt));
      if (woken) await this.executor?.submit(next);
    } catch (error) {
      if (!(error instanceof TaskNotFoundError)) throw error;
      await this.guard(async () => this.store.journal?.remove(taskId));
    }
    return woken;
  }

  /** Withdraws an outstanding input request (the work stopped waiting for it). */
  async withdrawInput(taskId: string, key: string): Promise<void> {
    await this.mutate(taskId, (record) => {
      if (!(key in record.inputRequests) && !(key in record.inputAnswers)) return null;
      delete record.inputRequests[key];
      delete record.inputAnswers[key];
      if (record.status === 'input_required' && Object.keys(record.inputRequests).length === 0) {
        this.transition(record, 'working');
      }
      return record;
    }).catch((error: unknown) => {
      if (!(error instanceof TaskNotFoundError)) throw error;
    });
  }

  /** Waits for the answer to `key`, removes it from the task and returns it. */
  async awaitInputAnswer(taskId: string, key: string, signal?: AbortSignal): Promise<InputAnswer> {
    let record = await this.store.get(taskId);
    for (;;) {
      if (!record) throw new TaskNotFoundError(taskId);
      const answer = record.inputAnswers[key];
      if (answer !== undefined) {
        await this.mutate(taskId, (current) => {
          if (!(key in current.inputAnswers)) return null;
          delete current.inputAnswers[key];
          return current;
        });
        return answer;
      }
      if (isTerminal(record.status)) throw new TaskTerminalError(taskId, record.status);
      if (!(key in record.inputRequests)) throw new TaskNotFoundError(taskId);
      record = await this.waitForChange(taskId, record.version, signal);
    }
  }

  /** Merges `meta` into a task that has not ended: state its work needs if it runs again (e.g. after recovery). */
  async annotate(taskId: string, meta: Record<string, unknown>): Promise<void> {
    await this.mutate(taskId, (record) => {
      if (isTerminal(record.status)) return null;
      record.meta = { ...record.meta, ...meta };
      return record;
    });
  }

  async setStatusMessage(taskId: string, statusMessage: string): Promise<void> {
    await this.mutate(taskId, (record) => {
      if (isTerminal(record.status) || record.statusMessage === statusMessage) return null;
      record.statusMessage = statusMessage;
      return record;
    });
  }

  /** Stores the work's latest progress (and its message as the statusMessage) in one write; ignored once terminal. */
  async reportProgress(taskId: string, update: ProgressUpdate): Promise<void> {
    await this.mutate(taskId, (record) => {
      // spec R56: no progress once the task has ended.
      if (isTerminal(record.status)) return null;
      const progress: TaskProgress = { progress: update.progress, seq: (record.progress?.seq ?? 0) + 1 };
      if (update.total !== undefined) progress.total = update.total;
      if (update.message !== undefined) {
        progress.message = update.message;
        record.statusMessage = update.message;
      }
      record.progress = progress;
      return record;
    });
  }

  /** Moves an `input_required` task back to `working` (e.g. a multi-round-trip tool re-invoked with its answers). */
  async resume(taskId: string): Promise<TaskRecord> {
    return this.mutate(taskId, (record) => {
      if (record.status !== 'input_required') {
        if (isTerminal(record.status)) throw new TaskTerminalError(taskId, record.status);
        return null;
      }
      return this.transition(record, 'working');
    });
  }

  /**
   * Stores the outcome exactly and ends the task: a JSON-RPC error or a result ends it `failed` or `completed`
   * according to the dialect's policy. Returns false when the task was already terminal (spec R51: a cancelled
   * task stays cancelled) or is gone.
   */
  async complete(taskId: string, outcome: TaskOutcome, statusMessage?: string): Promise<boolean> {
    const max = this.limits.maxResultBytes;
    const bytes = max === null ? 0 : jsonBytes(outcome);
    if (max !== null && bytes > max) {
      // An unbounded blob is never stored: the task fails with a message saying why, and the result is dropped.
      const size = Number.isFinite(bytes) ? `${bytes} bytes` : 'too deeply nested to store';
      const message = `The task's result is too large to store (${size}; the limit is ${max} bytes)`;
      this.logger.warn({ taskId, bytes, maxBytes: max }, 'task result over the size cap');
      outcome = { kind: 'error', error: { code: -32603, message, data: { limit: 'result_size', maxBytes: max } } };
      statusMessage = message;
    }
    try {
      let won = false;
      const next = await this.mutate(taskId, (record) => {
        won = false;
        if (isTerminal(record.status)) return null;
        won = true;
        const status = outcomeStatus(record, outcome);
        record.outcome = outcome;
        const message = statusMessage ?? (status === 'failed' ? failureMessage(outcome) : undefined);
        return this.toTerminal(record, status, message);
      });
      if (won) {
        this.logger.info({ taskId, owner: next.owner, status: next.status }, 'task finished');
        this.emit({ type: 'finished', task: next });
      }
      return won;
    } catch (error) {
      if (error instanceof TaskNotFoundError) return false;
      throw error;
    }
  }

  /** Fails a task with a diagnostic statusMessage (spec R61) and, optionally, the JSON-RPC error to return for it. */
  async fail(taskId: string, statusMessage: string, error?: JsonRpcErrorObject): Promise<boolean> {
    const outcome: TaskOutcome = { kind: 'error', error: error ?? { code: -32603, message: statusMessage } };
    return this.complete(taskId, outcome, statusMessage);
  }

  // ---- waiting ---------------------------------------------------------------------------------------------------

  /** Calls `listener` with the current record (or undefined once gone) after every change of the task. */
  observe(taskId: string, listener: (record: TaskRecord | undefined) => void): () => void {
    let closed = false;
    const unsubscribe = this.store.events.subscribe(taskId, () => {
      if (closed) return;
      this.store.get(taskId).then(
        (record) => {
          if (!closed) listener(record);
        },
        (error: unknown) => this.logger.warn({ taskId, error: String(error) }, 'observe read failed'),
      );
    });
    return () => {
      closed = true;
      unsubscribe();
    };
  }

  /**
   * Resolves with the task once its version is past `sinceVersion`, or undefined once it is gone. Wakes on events;
   * re-reads every `recheckIntervalMs` in case an event was lost.
   */
  waitForChange(taskId: string, sinceVersion: number, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (error: unknown, record?: TaskRecord) => {
        if (settled) return;
        settled = true;
        unsubscribe();
        clearInterval(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve(record);
      };
      const check = () => {
        if (settled) return;
        this.store.get(taskId).then(
          (record) => {
            if (!record || record.version > sinceVersion) finish(undefined, record);
          },
          (error: unknown) =>
            finish(new StoreUnavailableError(`Task store read failed: ${String(error)}`, { cause: error })),
        );
      };
      const onAbort = () => finish(signal?.reason ?? new Error('aborted'));
      const unsubscribe = this.store.events.subscribe(taskId, check);
      const timer = setInterval(check, this.recheckIntervalMs);
      timer.unref();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      // Subscribed first, then read: a change between the caller's read and the subscription is not missed.
      check();
    });
  }

  /** Resolves with the task once it is terminal, or undefined once it is gone (expired or deleted). */
  async waitForTerminal(taskId: string, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    let record = await this.guard(() => this.store.get(taskId));
    while (record && !isTerminal(record.status) && !this.isExpired(record, this.clock.now())) {
      record = await this.waitForChange(taskId, record.version, signal);
    }
    return record && !this.isExpired(record, this.clock.now()) ? record : undefined;
  }

  // ---- background maintenance ---------------------------------------------------------------------------------

  /** Removes expired tasks in batches; work still running for them is aborted through their events. */
  async sweep(batch = 500): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await this.guard(() => this.store.sweepExpired(this.clock.now(), batch));
      total += removed.length;
      for (const record of removed) {
        await this.guard(async () => this.store.journal?.remove(record.taskId));
        await this.guard(() => this.timelines.remove(record.taskId));
        await this.publish(record.taskId);
      }
      if (removed.length < batch) return total;
    }
  }

  /** Finds tasks whose runner stopped renewing its lease and applies the recovery policy to each. */
  async recover(): Promise<{ failed: number; rerun: number }> {
    const counts = { failed: 0, rerun: 0 };
    const stale = await this.guard(() => this.store.findStale(this.clock.now(), 1000));
    for (const found of stale) {
      const decision = this.recoveryPolicy(found);
      let applied = false;
      try {
        const next = await this.mutate(found.taskId, (record) => {
          const now = this.clock.now();
          applied = false;
          if (isTerminal(record.status) || record.leaseUntil === undefined || record.leaseUntil >= now) return null;
          applied = true;
          if (decision.action === 'fail') {
            record.recovery = 'failed-after-crash';
            record.outcome = { kind: 'error', error: { code: -32603, message: decision.statusMessage } };
            return this.toTerminal(record, 'failed', decision.statusMessage);
          }
          record.recovery = 'rerun-after-crash';
          record.recoveries = (record.recoveries ?? 0) + 1;
          record.inputRequests = {};
          record.inputAnswers = {};
          if (record.status === 'input_required') this.transition(record, 'working');
          record.statusMessage = `Re-running after the previous run was interrupted (attempt ${record.attempts + 1})`;
          if (this.executor?.leasesOnCreate) {
            record.runner = this.executor.runnerId;
            record.leaseUntil = now + this.leaseMs;
          } else {
            delete record.runner;
            delete record.leaseUntil;
          }
          return record;
        });
        if (!applied) continue;
        this.emit({ type: 'recovered', task: next, action: decision.action });
        if (decision.action === 'fail') this.emit({ type: 'finished', task: next });
        if (decision.action === 'fail') {
          counts.failed += 1;
          this.logger.warn({ taskId: next.taskId, owner: next.owner }, 'task failed after its runner stopped');
        } else {
          counts.rerun += 1;
          this.logger.warn(
            { taskId: next.taskId, owner: next.owner, attempt: next.attempts + 1 },
            'task re-run after its runner stopped',
          );
          await this.executor?.submit(next);
        }
      } catch (error) {
        if (!(error instanceof TaskNotFoundError)) throw error;
      }
    }
    return counts;
  }

  /** Extends this runner's leases; executors call it while they hold tasks. */
  async renewLeases(runner: string): Promise<void> {
    await this.guard(() => this.store.renewLeases(runner, this.clock.now() + this.leaseMs));
  }

  isExpired(record: TaskRecord, now: number): boolean {
    return record.expiresAt !== null && record.expiresAt <= now;
  }

  // ---- internals ------------------------------------------------------------------------------------------------

  private cursorCodec(): CursorCodec {
    if (!this.cursors) throw new StoreUnavailableError('The task engine has not been started');
    return this.cursors;
  }

  private checkSize(what: 'arguments' | 'input', value: unknown): void {
    const max = this.limits.maxArgumentsBytes;
    if (max === null) return;
    const bytes = jsonBytes(value);
    if (bytes > max) throw new TaskTooLargeError(what, bytes, max);
  }

  private checkDepth(what: 'params' | 'input', value: unknown): void {
    if (nestsDeeperThan(value, this.limits.maxJsonDepth)) throw new TaskTooDeepError(what, this.limits.maxJsonDepth);
  }

  private visible(record: TaskRecord | undefined, scope: OwnerScope, lookup: string): TaskRecord {
    if (!record) throw new TaskNotFoundError(lookup);
    // spec R63 R67: a foreign task is indistinguishable from a missing one.
    if (!(scope === ANY_OWNER ? isReachableById(record) : record.owner === scope)) throw new TaskNotFoundError(lookup);
    if (this.isExpired(record, this.clock.now())) throw new TaskExpiredError(lookup);
    return record;
  }

  private async matchIdempotent(input: CreateTaskInput, now: number): Promise<TaskRecord | undefined> {
    const key = input.idempotencyKey as string;
    const existing = await this.guard(() => this.store.getByIdempotencyKey(input.owner, key));
    if (!existing) return undefined;
    if (this.isExpired(existing, now)) {
      // An expired holder no longer reserves its key.
      await this.guard(() => this.store.delete(existing.taskId));
      return undefined;
    }
    if (stableJson(existing.request) !== stableJson(input.request)) throw new TaskConflictError(key, existing.taskId);
    return existing;
  }

  private clampRetention(requested: RetentionRequest | undefined): RetentionPolicy {
    const { maxTtlMs, defaultTtlMs, minTtlMs } = this.limits;
    const clamp = (value: number | null | undefined): number | null => {
      // spec R29 R71: the server may override the requested ttl and caps it; the actual value is reported back.
      let ms = value === undefined ? defaultTtlMs : value;
      if (ms !== null) ms = Math.max(minTtlMs, Math.round(ms));
      if (maxTtlMs !== null && (ms === null || ms > maxTtlMs)) ms = maxTtlMs;
      return ms;
    };
    if (requested?.kind === 'keepAlive') return { kind: 'keepAlive', keepAliveMs: clamp(requested.keepAliveMs) };
    return { kind: 'ttl', ttlMs: clamp(requested?.ttlMs) };
  }

  /** Adds outstanding input requests to a non-terminal task and moves it to `input_required` (spec R23). */
  private addInputRequests(
    record: TaskRecord,
    requests: Array<{ method: string; params?: Record<string, unknown> }>,
  ): string[] {
    if (isTerminal(record.status)) throw new TaskTerminalError(record.taskId, record.status);
    const now = this.clock.now();
    const keys = requests.map((request) => {
      // spec E10: a per-task counter keeps keys unique; the random part makes them unguessable, so knowing a task id
      // is not enough to answer its questions on the wire.
      const key = `input-${record.nextInputSeq++}-${randomBytes(16).toString('hex')}`;
      const pending: PendingInput = { method: request.method, createdAt: now };
      if (request.params !== undefined) pending.params = request.params;
      record.inputRequests[key] = pending;
      return key;
    });
    if (record.status === 'working') this.transition(record, 'input_required');
    return keys;
  }

  private transition(record: TaskRecord, to: TaskStatus): TaskRecord {
    if (!canTransition(record.status, to)) throw new InvalidTransitionError(record.taskId, record.status, to);
    record.status = to;
    return record;
  }

  private toTerminal(
    record: TaskRecord,
    status: 'completed' | 'failed' | 'cancelled',
    statusMessage?: string,
  ): TaskRecord {
    this.transition(record, status);
    const now = this.clock.now();
    record.terminalAt = now;
    if (statusMessage !== undefined) record.statusMessage = statusMessage;
    record.inputRequests = {};
    record.inputAnswers = {};
    delete record.runner;
    delete record.leaseUntil;
    if (record.retention.kind === 'keepAlive') {
      record.expiresAt = record.retention.keepAliveMs === null ? null : now + record.retention.keepAliveMs;
    }
    return record;
  }

  /**
   * Read-modify-write with compare-and-set. `change` edits a copy and returns it, or returns null for "no change"
   * (the current record is returned). Concurrent writers retry on a fresh read, so racing terminal transitions
   * always leave exactly one terminal state.
   */
  private async mutate(taskId: string, change: (record: TaskRecord) => TaskRecord | null): Promise<TaskRecord> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.guard(() => this.store.get(taskId));
      if (!current) throw new TaskNotFoundError(taskId);
      const next = change(structuredClone(current));
      if (next === null) return current;
      next.version = current.version + 1;
      next.lastUpdatedAt = Math.max(this.clock.now(), current.lastUpdatedAt);
      if (await this.guard(() => this.store.replace(next, current.version))) {
        await this.timelines.record(current, next);
        await this.publish(taskId);
        return next;
      }
      if (attempt > 1000) throw new StoreUnavailableError(`Could not update task ${taskId}: too much contention`);
    }
  }

  private emit(event: TaskLifecycleEvent): void {
    try {
      this.onLifecycle?.(event);
    } catch (error) {
      this.logger.warn({ taskId: event.task.taskId, error: String(error) }, 'lifecycle hook threw');
    }
  }

  private async publish(taskId: string): Promise<void> {
    try {
      await this.store.events.publish(taskId);
    } catch (error) {
      // Events only wake waiters; the re-check interval covers a lost one.
      this.logger.warn({ taskId, error: String(error) }, 'task event publish failed');
    }
  }

  private async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (isTaskError(error)) throw error;
      throw new StoreUnavailableError(
        `Task store unavailable: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
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

function outcomeStatus(record: TaskRecord, outcome: TaskOutcome): 'completed' | 'failed' {
  if (outcome.kind === 'error') return 'failed';
  // spec R62 (2025-11-25: failed) vs E15 (extension: completed): the dialect chose at creation.
  return outcome.result['isError'] === true ? record.toolErrorStatus : 'completed';
}

function failureMessage(outcome: TaskOutcome): string {
  if (outcome.kind === 'error') return `The request failed: ${outcome.error.message} (code ${outcome.error.code})`;
  const content = outcome.result['content'];
  if (Array.isArray(content)) {
    const text = content
      .map((block: unknown) => (block && typeof block === 'object' && 'text' in block ? String(block.text) : ''))
      .filter(Boolean)
      .join(' ');
    if (text) return `The tool reported an error: ${text.slice(0, 500)}`;
  }
  return 'The tool reported an error';
}

function isReachableById(record: TaskRecord): boolean {
  return record.reachableById ?? !record.owner.startsWith(PRINCIPAL_OWNER_PREFIX);
}
