import type { Clock } from './Clock.js';
import type { EngineLogger, TaskLifecycleEvent } from './EngineHooks.js';
import type { EngineLimits } from './EngineLimits.js';
import type { Executor } from './Executor.js';
import type { RecoveryPolicy } from './RecoveryPolicy.js';
import type { TaskRecord } from './TaskRecord.js';
import type { TaskStore } from './TaskStore.js';

/**
 * The default lease: with the recovery scan every third of it, a runner killed mid-task (a worker, kill -9) has its
 * tasks taken over within 8 s, for one store write per runner every 2 s.
 */
export const DEFAULT_LEASE_MS = 6_000;

export interface TaskEngineOptions {
  store: TaskStore;
  executor?: Executor;
  clock?: Clock;
  limits?: Partial<EngineLimits>;
  /**
   * How long a runner's claim on a task lasts without renewal (renewed every third of it); bounds how late a dead
   * runner is noticed, and how long a stalled one is trusted. Default 6 s ({@link DEFAULT_LEASE_MS}).
   */
  leaseMs?: number;
  /** Interval of the expiry sweeper. Default 60 s; 0 disables it. */
  sweepIntervalMs?: number;
  /** Interval of the dead-runner scan. Default: a third of `leaseMs` (2 s); 0 disables it. */
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

export interface ListResult {
  tasks: TaskRecord[];
  nextCursor?: string;
}
