import type { TaskRecord } from '../record/TaskRecord.js';

/** Where the engine logs (pino-shaped: fields first). */
export interface EngineLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };

/** What happened to a task, for metrics and audit hooks. */
export type TaskLifecycleEvent =
  | { type: 'created' | 'deleted'; task: TaskRecord }
  | { type: 'finished'; task: TaskRecord }
  | { type: 'recovered'; task: TaskRecord; action: 'rerun' | 'fail' }
  /** A run told to stop (cancel, expiry, takeover) ended; `stopMs` from the abort to its work returning. */
  | { type: 'run_stopped'; task: TaskRecord; stopMs: number }
  /** A run told to stop still ran past the grace period: its work ignores the abort. */
  | { type: 'run_overdue'; task: TaskRecord; graceMs: number };
