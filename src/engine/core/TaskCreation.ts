import { randomUUID } from 'node:crypto';

import type { Clock } from '../contracts/Clock.js';
import type { EngineLogger } from '../contracts/EngineHooks.js';
import {
  checkActiveLimit,
  checkDepth,
  checkSize,
  clampRetention,
  limitError,
  type EngineLimits,
} from './EngineLimits.js';
import type { Executor } from '../contracts/Executor.js';
import type { FetchedEviction } from './FetchedEviction.js';
import { stableJson } from '../util/stableJson.js';
import { confirmInsert, UnconfirmedInsertError } from './confirmInsert.js';
import { CREATE_WAIT_MS, reconnectDelayMs } from './storeWait.js';
import type { TaskAccess } from './TaskAccess.js';
import { StoreUnavailableError, TaskConflictError } from '../record/TaskError.js';
import type { RetentionRequest, TaskRecord, TaskRequest } from '../record/TaskRecord.js';
import type { TaskSpans } from '../tracing/TaskSpans.js';
import { COUNT_REUSE_MS, RecentOwnerCounts } from './RecentOwnerCounts.js';
import { UnconfirmedRemovals } from './UnconfirmedRemovals.js';
import type { InsertAlong, InsertResult, OwnerLimits } from '../contracts/TaskStore.js';
import { isExpired } from '../record/transitions.js';

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

/**
 * Creating a task: the idempotency key, the per-owner caps, and the order of "queued" and "stored" that keeps a stored
 * task from ever lacking a run on its way.
 */
export class TaskCreation {
  constructor(
    private readonly access: TaskAccess,
    private readonly clock: Clock,
    private readonly logger: EngineLogger,
    private readonly limits: EngineLimits,
    private readonly leaseMs: number,
    private readonly spans: TaskSpans,
    private readonly executor: () => Executor | undefined,
    /** Sweeps expired tasks; a stored-task refusal runs it once, as expired tasks count until swept. */
    private readonly sweep: () => Promise<number>,
    /** Evicts fetched tasks at a stored-task bound, before a creation is refused. */
    private readonly room: FetchedEviction,
  ) {
    this.unconfirmed = new UnconfirmedRemovals(access, logger);
  }

  private readonly creating = new Map<string, Promise<void>>();
  /** Per owner, the creations that passed their turn on early (passTurn) and are not settled yet. */
  private readonly inFlight = new Map<string, Set<Promise<void>>>();
  private readonly recentCounts = new RecentOwnerCounts();
  private readonly unconfirmed: UnconfirmedRemovals;

  /** Stops the removal of unconfirmed creations (the engine is closing). */
  stop(): void {
    this.unconfirmed.stop();
  }

  /** Creates a task; resolves only once the store has it. `created` is false when an idempotent retry matched. */
  async create(input: CreateTaskInput): Promise<{ task: TaskRecord; created: boolean }> {
    checkDepth(this.limits, 'params', input.request.params);
    if (input.meta) checkDepth(this.limits, 'params', input.meta);
    // Refused before anything is queued or stored, and before waiting behind the owner's other creations.
    checkSize(this.limits, 'arguments', { request: input.request, meta: input.meta ?? {} });
    // One owner's creations take their turn in this process, so racing creations do not queue work for tasks the
    // store then refuses; the store enforces the per-owner caps atomically across processes. A creation hands the
    // turn on as soon as its count found room for every creation of the owner in flight here (`roomFound`), else
    // once it is settled: near the cap, each count then sees the inserts before it.
    const previous = this.creating.get(input.owner) ?? Promise.resolve();
    let roomFound = (): void => {};
    const turnPassed = new Promise<void>((resolve) => (roomFound = resolve));
    let markDone = (): void => {};
    const done = new Promise<void>((resolve) => (markDone = resolve));
    // spec R49: a bounded wait, in line and for the store and the queue; past it the creation is refused unstored.
    const wait: CreationWait = {
      deadline: Date.now() + CREATE_WAIT_MS,
      inserting: false,
      refused: false,
      roomFound,
      done,
      counted: false,
    };
    const current = previous.then(
      () => this.createPatiently(input, wait),
      () => this.createPatiently(input, wait),
    );
    const settled = current.then(
      () => undefined,
      () => undefined,
    );
    const turn = Promise.race([turnPassed, settled]);
    this.creating.set(input.owner, turn);
    void settled.then(() => {
      if (wait.counted) this.uncount(input.owner, done);
      markDone();
      if (this.creating.get(input.owner) === turn) this.creating.delete(input.owner);
    });
    // The requestor is answered at the deadline even while earlier creations hold the line or the queue does not
    // answer; the creation then stops at its next step (createNow), so nothing is stored for a refused creation.
    return answeredBy(current, wait);
  }

  /**
   * createNow, tried again while the store is briefly away and nothing of this creation can have been stored (the
   * failure came before the insert, or the insert certainly was not applied), until the creation's deadline: one
   * behaviour for short outages of any store, a wait within the bound rather than an error (spec R49).
   */
  private async createPatiently(
    input: CreateTaskInput,
    wait: CreationWait,
  ): Promise<{ task: TaskRecord; created: boolean }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.createNow(input, wait);
      } catch (error) {
        this.recentCounts.forget(input.owner);
        const outage = error instanceof StoreUnavailableError && error.reason === undefined;
        if (!outage || wait.inserting || wait.refused) throw error;
        await new Promise((resolve) => setTimeout(resolve, reconnectDelayMs(attempt)));
      }
    }
  }

  private async createNow(input: CreateTaskInput, wait: CreationWait): Promise<{ task: TaskRecord; created: boolean }> {
    checkWait(wait);
    const now = this.clock.now();
    if (input.idempotencyKey !== undefined) {
      const existing = await this.matchIdempotent(input, now);
      if (existing) return { task: existing, created: false };
    }
    const executor = this.executor();
    const leases = executor?.leasesOnCreate ?? false;
    const record = this.newRecord(input, now);
    // A refused creation's span is dropped unended, so it is never exported.
    const span = this.spans.begin(record);
    if (leases && executor) {
      record.runner = executor.runnerId;
      record.leaseUntil = now + this.leaseMs;
    }
    const run = (input.run ?? true) && executor !== undefined;
    // A job queued for a task the store then refuses would be dropped by its worker; an early count avoids most.
    if (run && !leases) {
      const count = async () => {
        const active = await this.access.guard(() => this.access.store.countActive(input.owner));
        this.recentCounts.counted(input.owner, active, Date.now());
        return active;
      };
      // Far below the cap (under half, with every creation in flight here), a recent count serves: there it only
      // orders the queue, and a busy owner's creations then skip a read each. Not while the store is in trouble: the
      // read then meets the outage first, as it would without the reuse.
      const recent = this.recentCounts.recent(input.owner, Date.now());
      const inFlight = this.inFlight.get(input.owner)?.size ?? 0;
      const steady = this.access.reachability.steadyFor(this.clock.now()) > COUNT_REUSE_MS;
      const farBelow = recent !== undefined && steady && 2 * (recent + inFlight + 1) < this.limits.maxActivePerOwner;
      let ownerActive = farBelow ? recent : await count();
      // Near the cap, a count is exact only once the owner's creations in flight here are stored or refused.
      for (let ahead = this.inFlight.get(input.owner); ahead?.size; ahead = this.inFlight.get(input.owner)) {
        if (ownerActive + ahead.size + 1 < this.limits.maxActivePerOwner) break;
        await Promise.all([...ahead]);
        checkWait(wait);
        ownerActive = await count();
      }
      checkActiveLimit(this.limits, ownerActive);
      this.passTurn(input, ownerActive, wait);
      // A queue is told first: if this process dies right after the insert, the work is already queued, so a task is
      // never stored without a run on its way. A job that finds no task (the insert never happened) is dropped. The
      // count goes along: the queue orders owners by it and need not read it again.
      checkWait(wait);
      // A job added after the creation was refused finds no task and is dropped by its worker.
      await this.access.guard(async () => executor?.submit(record, { ownerActive }));
    }
    // A leasing executor with a slot free for the task now: the insert records the claim too, so the run starts
    // without a write of its own. Crashing before the run starts then counts as crashing just after a claim.
    const reservation = run && leases ? executor?.reserve?.(record) : undefined;
    if (reservation) {
      record.attempts = 1;
      record.startedAt = now;
    }
    try {
      // A store that can appends the creation's timeline entries with the insert itself.
      const { store, timelines } = this.access;
      const timeline = store.insertsAlong ? timelines.entriesFor(undefined, record) : undefined;
      // The insert is the point of no return: once sent, the creation waits for its outcome, deadline or not.
      checkWait(wait);
      wait.inserting = true;
      let result: Exclude<InsertResult, { reason: 'limit' }>;
      try {
        result = await this.insertCapped(record, timeline && { timeline }, wait.deadline);
      } catch (error) {
        // Unknown whether it was stored: removed if it was, once the store answers. Anything else: not stored.
        if (error instanceof UnconfirmedInsertError) this.unconfirmed.add(record);
        else wait.inserting = false;
        throw error;
      }
      if (!result.inserted) {
        reservation?.release();
        if (result.reason === 'duplicate_key' && input.idempotencyKey !== undefined) {
          const existing = await this.matchIdempotent(input, now);
          if (existing) return { task: existing, created: false };
        }
        // A 122-bit random id collided, or the key's holder vanished between reads: retry once with fresh state.
        return this.createNow(input, wait);
      }
      if (!store.insertsAlong) await timelines.record(undefined, record);
      this.recentCounts.created(record.owner);
      this.spans.hold(record, span);
      this.logger.info({ taskId: record.taskId, owner: record.owner, method: record.request.method }, 'task created');
      this.access.emit({ type: 'created', task: record });
      if (reservation) reservation.start(record);
      else if (run && leases) await executor?.submit(record);
      return { task: record, created: true };
    } catch (error) {
      reservation?.release();
      throw error;
    }
  }

  /**
   * Lets the owner's next creation start before this one is stored when the count leaves room for this creation and
   * every other one of the owner in flight here, even if the count already included them. An idempotent creation
   * keeps its turn, so a retry behind it finds the task it stored.
   */
  private passTurn(input: CreateTaskInput, ownerActive: number, wait: CreationWait): void {
    if (input.idempotencyKey !== undefined || wait.counted) return;
    const ahead = this.inFlight.get(input.owner) ?? new Set<Promise<void>>();
    if (ownerActive + ahead.size + 1 >= this.limits.maxActivePerOwner) return;
    wait.counted = true;
    ahead.add(wait.done);
    this.inFlight.set(input.owner, ahead);
    wait.roomFound();
  }

  private uncount(owner: string, done: Promise<void>): void {
    const ahead = this.inFlight.get(owner);
    ahead?.delete(done);
    if (ahead?.size === 0) this.inFlight.delete(owner);
  }

  private newRecord(input: CreateTaskInput, now: number): TaskRecord {
    const retention = clampRetention(this.limits, input.retention);
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
    return record;
  }

  /**
   * Inserts under the per-owner caps (spec R70) and the total byte cap. A refusal at a stored-task bound (count or
   * bytes) first sweeps expired tasks, then evicts the owner's fetched tasks, earliest fetched first, trying again
   * after each; it stands only when neither frees anything: the owner's stored tasks are unfetched or running.
   */
  private async insertCapped(
    record: TaskRecord,
    along: InsertAlong | undefined,
    deadline: number,
  ): Promise<Exclude<InsertResult, { reason: 'limit' }>> {
    const { store } = this.access;
    const limits: OwnerLimits = {
      maxActive: this.limits.maxActivePerOwner,
      maxStored: this.limits.maxStoredPerOwner,
      ...(this.limits.maxStoredBytesPerOwner !== null && { maxStoredBytes: this.limits.maxStoredBytesPerOwner }),
    };
    await this.room.checkTotal();
    const insert = () => confirmInsert(this.access, record, () => store.insert(record, limits, along), deadline);
    let result = await insert();
    // Racing creations of other processes may take the room made: a few rounds, each of which must free something.
    for (
      let round = 0;
      round < 4 && !result.inserted && result.reason === 'limit' && result.limit !== 'active';
      round++
    ) {
      // Expired tasks count until they are swept: sweep them before evicting anything still readable.
      const freed = round === 0 ? await this.sweep() : await this.room.evict(record.owner);
      if (freed === 0 && round > 0) break;
      if (freed > 0) result = await insert();
    }
    if (!result.inserted && result.reason === 'limit') throw limitError(this.limits, result.limit);
    return result;
  }

  private async matchIdempotent(input: CreateTaskInput, now: number): Promise<TaskRecord | undefined> {
    const { store } = this.access;
    const key = input.idempotencyKey as string;
    const existing = await this.access.guard(() => store.getByIdempotencyKey(input.owner, key));
    if (!existing) return undefined;
    if (isExpired(existing, now)) {
      // An expired holder no longer reserves its key.
      await this.access.guard(() => store.delete(existing.taskId));
      return undefined;
    }
    if (stableJson(existing.request) !== stableJson(input.request)) throw new TaskConflictError(key, existing.taskId);
    return existing;
  }
}

/** A creation's bounded wait: refused at `deadline` unless its insert was sent by then. */
interface CreationWait {
  deadline: number;
  inserting: boolean;
  refused: boolean;
  /** Hands the owner's turn to its next creation. */
  roomFound(): void;
  /** Settles with the creation, whatever its outcome. */
  done: Promise<void>;
  /** Whether this creation counts among the owner's in flight (it passed its turn on early). */
  counted: boolean;
}

function notCreated(): StoreUnavailableError {
  return new StoreUnavailableError(
    `The task was not created: the task store or the job queue did not answer within ${CREATE_WAIT_MS} ms; nothing was stored, so trying again is safe.`,
    { reason: 'not_created' },
  );
}

/** Throws when the creation was refused or its deadline passed: the next step (queueing, inserting) is not taken. */
function checkWait(wait: CreationWait): void {
  if (wait.refused || Date.now() >= wait.deadline) {
    wait.refused = true;
    throw notCreated();
  }
}

/** `work`, or a refusal at the deadline if its insert has not been sent by then. */
function answeredBy<T>(work: Promise<T>, wait: CreationWait): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => {
        if (wait.inserting) return;
        wait.refused = true;
        reject(notCreated());
      },
      Math.max(0, wait.deadline - Date.now()),
    );
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
