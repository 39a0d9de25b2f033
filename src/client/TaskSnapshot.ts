import { progressFromMeta } from '../protocol/index.js';
import type { DialectName } from './DialectName.js';
import type { TaskStatus } from './TaskStatus.js';

/** One observation of a task, normalised across dialects (field names follow the 2026 extension). */
export interface TaskSnapshot {
  /** Absent for a plain (non-task) call. */
  taskId?: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  /** Retention in ms: `ttl` (2025-11-25, from creation), `ttlMs` (extension), `keepAlive` (SEP-1686, after completion). `null` is unlimited. */
  ttlMs?: number | null;
  /** The server's suggested gap between polls, in ms. */
  pollIntervalMs?: number;
  dialect: DialectName;
  /** Local: a cancel was sent and the server's final word is still awaited. Never set by the server. */
  cancelRequested?: boolean;
  /**
   * The task's latest progress: from `notifications/progress` for the call (the token stays valid for the task's
   * life, spec R55), or as `tasks/get` carries it in `_meta` (every generation, the 2026 extension included).
   * `progress.progress` and `progress.total` draw a progress bar; `total` is absent when the work does not know it.
   */
  progress?: TaskProgress;
}

export interface TaskProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** The progress a server's task or result carries in `_meta`, for a snapshot (`{}` without one). */
export function progressOfWire(value: Record<string, unknown>): { progress?: TaskProgress } {
  const meta = progressFromMeta(value);
  if (meta === undefined) return {};
  return {
    progress: {
      progress: meta.progress,
      ...(meta.total !== undefined && { total: meta.total }),
      ...(meta.message !== undefined && { message: meta.message }),
    },
  };
}

/** Whether two snapshots would look the same to a person watching the task. */
export function sameVisibleState(a: TaskSnapshot | undefined, b: TaskSnapshot): boolean {
  return (
    a !== undefined &&
    a.status === b.status &&
    a.statusMessage === b.statusMessage &&
    Boolean(a.cancelRequested) === Boolean(b.cancelRequested) &&
    a.progress?.progress === b.progress?.progress &&
    a.progress?.total === b.progress?.total &&
    a.progress?.message === b.progress?.message
  );
}
