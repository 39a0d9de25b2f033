import type { Clock } from '../contracts/Clock.js';
import type { EngineLogger, TaskLifecycleEvent } from '../contracts/EngineHooks.js';
import type { EngineLimits } from './EngineLimits.js';
import type { Executor } from '../contracts/Executor.js';
import type { RecoveryPolicy } from './RecoveryPolicy.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import type { TaskStore } from '../contracts/TaskStore.js';
import type { EventCheck } from './TaskEvents.js';

/**
 * The default lease. An in-process executor leases every task it holds, queued ones included, and each renewal
 * rewrites all of them, so its lease stays long; queue workers lease only the tasks they run and take a shorter one
 * (runWorker). A restarted single-node SQLite server does not wait for leases at all (its runner locks).
 */
export const DEFAULT_LEASE_MS = 15_000;

/** How long a run told to stop may keep running before its timeline flags it. */
export const DEFAULT_ABORT_GRACE_MS = 10_000;

export interface TaskEngineOptions {
  store: TaskStore;
  executor?: Executor;
  clock?: Clock;
  limits?: Partial<EngineLimits>;
  /**
   * How long a runner's claim on a task lasts without renewal (renewed every third of it); bounds how late a dead
   * runner is noticed, and how long a stalled one is trusted. Default 15 s ({@link DEFAULT_LEASE_MS}); 6 s in
   * queue workers started with `runWorker`.
   */
  leaseMs?: number;
  /** How long a run told to stop may keep running before its timeline flags it (`run_overdue`). Default 10 s. */
  abortGraceMs?: number;
  /** Interval of the expiry sweeper. Default 60 s; 0 disables it. */
  sweepIntervalMs?: number;
  /** Interval of the dead-runner scan (an indexed read). Default: a third of `leaseMs`; 0 disables it. */
  recoveryIntervalMs?: number;
  /** Waiters re-read the store this often in case an event was lost. Default 5 s. */
  recheckIntervalMs?: number;
  /**
   * Whether a write of this process that ends a task sends the task's record with its event on a cross-process bus
   * (messages up to TASK_EVENT_RECORD_MAX_BYTES, 4 KiB), so waiters in other processes need not read it back. Every
   * process on the bus receives every event: in a large fleet, turn it off where tasks end (queue workers) to keep
   * each event at a few dozen bytes. Default true.
   */
  eventRecords?: boolean;
  /** Age after which a list cursor is refused as stale. Default 1 hour. */
  cursorTtlMs?: number;
  /**
   * How often durable timers (sleeps, retries, question deadlines) are read from the store's wake-at index. Default
   * 1 s; 10 s when the executor keeps the timers itself (`Executor.scheduleWake`, the queue executor's delayed jobs),
   * where the poll is only a safety net. 0 disables.
   */
  wakeIntervalMs?: number;
  recoveryPolicy?: RecoveryPolicy;
  logger?: EngineLogger;
  /** Called after each lifecycle change is stored (creation, every terminal status, deletion, recovery). */
  onLifecycle?: (event: TaskLifecycleEvent) => void;
  /**
   * Checks each event a task's work emits against its registered type (the Events extension's catalog supplies it:
   * `EventCatalog.check`). Without it any type name with JSON object data is stored. Give queue workers the same one.
   */
  checkEvent?: EventCheck;
  /**
   * Record each status change of a task in its event log (`TASK_STATUS_EVENT`), for subscribers to a task's events.
   * Default false; the runtime sets it when Events are served. Set it in queue workers too.
   */
  statusEvents?: boolean;
}

export interface ListResult {
  tasks: TaskRecord[];
  nextCursor?: string;
}
