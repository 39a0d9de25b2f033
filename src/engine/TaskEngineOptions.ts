import type { Clock } from './Clock.js';
import type { EngineLogger, TaskLifecycleEvent } from './EngineHooks.js';
import type { EngineLimits } from './EngineLimits.js';
import type { Executor } from './Executor.js';
import type { RecoveryPolicy } from './RecoveryPolicy.js';
import type { TaskRecord } from './TaskRecord.js';
import type { TaskStore } from './TaskStore.js';

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
}

export interface ListResult {
  tasks: TaskRecord[];
  nextCursor?: string;
}
