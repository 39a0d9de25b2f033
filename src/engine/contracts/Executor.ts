import type { TaskChange } from '../record/TaskChange.js';
import type { WakeEntry } from './StepJournalStore.js';
import type {
  InputAnswer,
  JsonRpcErrorObject,
  ProgressUpdate,
  ReportedStatus,
  TaskOutcome,
  TaskRecord,
} from '../record/TaskRecord.js';
import type { TaskStore } from './TaskStore.js';
import type { TimelineEntry } from '../record/TaskTimeline.js';

/** What a running task's work can do besides returning its outcome. */
export interface TaskWorkContext {
  readonly task: TaskRecord;
  /** Fires when the task is cancelled, deleted or expires, or the executor shuts down. */
  readonly signal: AbortSignal;
  setStatusMessage(message: string): Promise<void>;
  /**
   * Stores progress on the task (and its message as the statusMessage): `tasks/get` shows it on every generation, and
   * the process holding the requestor's connection relays it when the work runs elsewhere (a queue worker).
   */
  reportProgress?(update: ProgressUpdate): Promise<void>;
  /**
   * Hands over the run's last report of itself as the work returns, including one a throttle held back: it is
   * written with the outcome, so the finished task shows the last message and progress the work reported.
   */
  settleStatus?(reported: ReportedStatus): void;
  /**
   * The work gave up on its abort before what it started has stopped (an MCP tool's handler: the SDK answers nothing
   * for a cancelled request). The run's end is recorded once `ended` settles, so a handler that ignores the abort is
   * flagged after the grace period, and one that honours it shows how long it took to stop.
   */
  endsLater?(ended: Promise<unknown>): void;
  /**
   * Sends an input request to the requestor through the task: the task is `input_required` until every
   * outstanding request is answered. Resolves with the answer.
   */
  requestInput(request: { method: string; params?: Record<string, unknown> }): Promise<InputAnswer>;
  /**
   * Parks the task until the requestor answers `requests`: the task goes `input_required`, `metaFor(keys)` is merged
   * into the task (state the next run needs, given the keys the requests got), and the work should then return
   * `SUSPENDED`. Answering every request runs the work again, in whichever process the executor chooses.
   */
  suspend(
    requests: Array<{ method: string; params?: Record<string, unknown> }>,
    metaFor: (keys: string[]) => Record<string, unknown>,
  ): Promise<string[]>;
}

/** Returned by work that suspended itself for input (see TaskWorkContext.suspend). */
export const SUSPENDED = { kind: 'suspended' } as const;
export type TaskSuspension = typeof SUSPENDED;

/** The work of a task: runs the original request and returns its outcome, or SUSPENDED. */
export type TaskWork = (context: TaskWorkContext) => Promise<TaskOutcome | TaskSuspension>;

/** The part of the engine an executor drives. */
export interface EngineHandle {
  readonly leaseMs: number;
  /** Reads of the task a run holds and its events, to notice a change (a read finds one an event did not bring). */
  readonly store: Pick<TaskStore, 'get' | 'events'>;
  /** `known`: the task as the caller read it moments ago; the claim is tried on it first (see TaskAccess.update). */
  markStarted(taskId: string, runner: string, attempt?: number, known?: TaskRecord): Promise<TaskRecord | undefined>;
  /**
   * `known`: the run's latest copy of the task; the write is tried on it first. `attempt`: the run's claim; nothing is
   * recorded once a later claim superseded it.
   */
  complete(
    taskId: string,
    outcome: TaskOutcome,
    statusMessage?: string,
    known?: TaskRecord,
    attempt?: number,
    /** The run's last report of itself, written with the outcome. */
    reported?: ReportedStatus,
    /** Timeline entries written with the outcome (the run's end: one write fewer than after it). */
    entries?: TimelineEntry[],
  ): Promise<boolean>;
  fail(taskId: string, statusMessage: string, error?: JsonRpcErrorObject): Promise<boolean>;
  /**
   * `attempt`: the writing run; its writes are dropped once a later claim superseded it. `known`: the run's latest
   * copy of the task, the write is tried on it first. Resolves with the task as stored after the call (or nothing).
   */
  setStatusMessage(
    taskId: string,
    statusMessage: string,
    attempt?: number,
    known?: TaskRecord,
  ): Promise<TaskRecord | void>;
  reportProgress(
    taskId: string,
    update: ProgressUpdate,
    attempt?: number,
    known?: TaskRecord,
  ): Promise<TaskRecord | void>;
  /** `attempt`: the asking run; refused with StaleLeaseError once a later claim superseded it (so is `suspend`). */
  requestInput(
    taskId: string,
    requests: Array<{ method: string; params?: Record<string, unknown> }>,
    attempt?: number,
  ): Promise<string[]>;
  awaitInputAnswer(taskId: string, key: string, signal?: AbortSignal): Promise<InputAnswer>;
  /** Asks for the run `attempt` and waits for the answer, asking again should the store lose the question. */
  askForInput(
    taskId: string,
    request: { method: string; params?: Record<string, unknown> },
    attempt: number,
    signal: AbortSignal,
  ): Promise<InputAnswer>;
  withdrawInput(taskId: string, key: string): Promise<void>;
  suspend(
    taskId: string,
    requests: Array<{ method: string; params?: Record<string, unknown> }>,
    metaFor: (keys: string[]) => Record<string, unknown>,
    attempt?: number,
  ): Promise<string[]>;
  observe(
    taskId: string,
    listener: (record: TaskRecord | undefined) => void,
    wants?: (change: TaskChange) => boolean,
  ): () => void;
  renewLeases(runner: string): Promise<void>;
  isExpired(record: TaskRecord, now: number): boolean;
  /** Fires a durable timer: resumes the task if it is still parked until `wakeAt` and that time has come. */
  wake(entry: WakeEntry): Promise<boolean>;
  /** How long a run told to stop may keep running before its timeline flags it. Default 10 s. */
  readonly abortGraceMs?: number;
  /**
   * Records how a run ended, or that a run told to stop outlived the grace period, on the task's timeline (and the
   * lifecycle hook). Never throws.
   */
  runEnded?(task: TaskRecord, entry: TimelineEntry): Promise<void>;
}

/** What the engine already read about a task it submits, so an executor need not read it again. */
export interface SubmitContext {
  /** The owner's unfinished tasks just before this one was created (the creation's own limit check read it). */
  ownerActive?: number;
}

/** A slot an executor set aside for a task about to be created (see Executor.reserve). */
export interface RunReservation {
  /** Runs the task, now stored with the claim its insert recorded. Throws if the executor has closed meanwhile. */
  start(task: TaskRecord): void;
  /** Gives the slot back: the task was not stored. Idempotent; nothing after `start`. */
  release(): void;
}

/** Tasks an executor runs in this process now, and those waiting here for a slot. */
export interface ExecutorLoad {
  running: number;
  waiting: number;
}

/** The state of a queue that worker processes take tasks from (the console's overview shows it). */
export interface QueueStats {
  waiting: number;
  active: number;
  delayed: number;
  workers: Array<{ name: string; addr?: string; age?: number }>;
}

/** Runs tasks' work somewhere (this process, a worker pool) and reports outcomes through the engine. */
export interface Executor {
  /** A unique name of this executor instance; stored as the task's runner. */
  readonly runnerId: string;
  /** Whether the creating process takes the lease at creation (in-process) or a worker does when it starts (queue). */
  readonly leasesOnCreate: boolean;
  /** Accepts a durable task for execution. Resolves once accepted, not when finished. */
  submit(task: TaskRecord, known?: SubmitContext): Promise<void>;
  /**
   * For an executor that leases on create: sets a slot aside for `task`, about to be created, when it would start at
   * once (a slot free to it, nothing waiting). The creation then stores the task already claimed (attempt 1, as
   * `markStarted` would record it) and hands it over with `start`: one store write fewer for every task that finds a
   * free slot. Undefined when the task would have to wait; it is then submitted as usual.
   */
  reserve?(task: TaskRecord): RunReservation | undefined;
  /**
   * Keeps a parked task's durable timer itself (the queue executor: a delayed job), calling the engine's `wake` at
   * `wakeAt` in whichever process takes it. Optional: without it the engine arms in-process timers from its
   * wake-at index poll; with it that poll is a slower safety net (see TaskEngineOptions.wakeIntervalMs).
   */
  scheduleWake?(entry: WakeEntry): Promise<void>;
  /** What runs and waits in this process now (the metrics' load gauges). Optional: absent, the load reads as none. */
  load?(): ExecutorLoad;
  /** For an executor that queues tasks for workers: the queue's state (the console's overview). Optional. */
  queueStats?(): Promise<QueueStats>;
  close(): Promise<void>;
}
