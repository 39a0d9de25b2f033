import type { TaskStatus } from './TaskStatus.js';

/** A JSON-RPC error object, stored exactly as the underlying request failed. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * JSON-RPC's internal error: what a task's outcome carries when its work failed without an error of its own. The one
 * error code the engine knows; rpc's `ErrorCodes.INTERNAL_ERROR` is this constant.
 */
export const INTERNAL_ERROR_CODE = -32603;

/** What the underlying request produced: its JSON-RPC result or its JSON-RPC error. */
export type TaskOutcome =
  { kind: 'result'; result: Record<string, unknown> } | { kind: 'error'; error: JsonRpcErrorObject };

/** The original request (method and params without the task augmentation), kept for execution and audit. */
export interface TaskRequest {
  method: string;
  params: Record<string, unknown>;
}

/** A request the work sends to the requestor, e.g. `{ method: 'elicitation/create', params: { message, … } }`. */
export interface InputRequest {
  method: string;
  params?: Record<string, unknown>;
}

/** An outstanding request the work sent to the requestor (elicitation, sampling, roots). */
export interface PendingInput extends InputRequest {
  createdAt: number;
}

/** An answer to a pending input: the requestor's JSON-RPC result, or the JSON-RPC error it replied with. */
export type InputAnswer = { result: Record<string, unknown> } | { error: JsonRpcErrorObject };

/**
 * A standing, non-blocking input request (`step.offer`) under a key its author chose: it never moves the status,
 * survives parking, and takes one answer, kept until the work consumes it.
 */
export interface StandingOffer extends PendingInput {
  /** Set by the first answer; later ones are ignored. */
  answered?: boolean;
  /** The first answer, until the work consumed it. */
  answer?: InputAnswer;
}

/**
 * How long a task is kept. `ttl` counts from creation (2025-11-25, the extension);
 * `keepAlive` counts from the terminal status (SEP-1686). `null` means unlimited.
 */
export type RetentionPolicy = { kind: 'ttl'; ttlMs: number | null } | { kind: 'keepAlive'; keepAliveMs: number | null };

/** A requested retention: a missing duration means the server default. */
export type RetentionRequest =
  { kind: 'ttl'; ttlMs?: number | null } | { kind: 'keepAlive'; keepAliveMs?: number | null };

/** Progress the work reported, as `notifications/progress` carries it (spec R55). */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * What a run last reported of itself (a status message, progress or both), handed over as its work returns: it is
 * written with the outcome, so a finished task never shows an older report than the last one.
 */
export interface ReportedStatus {
  message?: string;
  progress?: ProgressUpdate;
}

/** The latest progress stored on a task; `seq` grows with every report, so a reader never goes backwards. */
export interface StoredProgress extends ProgressUpdate {
  seq: number;
}

/** How a task ended up in a terminal state through crash recovery, when it did. */
export type RecoveryMark = 'failed-after-crash' | 'rerun-after-crash' | 'requeued-before-start';

/** The engine's task: a superset of what each dialect shows. */
export interface TaskRecord {
  taskId: string;
  /** The owner scope: the principal, or the session when no principal exists. */
  owner: string;
  /** Created without authentication: the task id is the capability (spec R64). Absent on records of older versions. */
  reachableById?: boolean;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: number;
  lastUpdatedAt: number;
  /** The actual retention after clamping to the server maximum. */
  retention: RetentionPolicy;
  /** Absolute expiry in epoch ms; null while unlimited or while a keep-alive task is still running. */
  expiresAt: number | null;
  pollIntervalMs?: number;
  request: TaskRequest;
  outcome?: TaskOutcome;
  /** Outstanding input requests by key. Keys are never reused within a task. */
  inputRequests: Record<string, PendingInput>;
  /** Answers received and not yet taken by the work. */
  inputAnswers: Record<string, InputAnswer>;
  nextInputSeq: number;
  /** Standing input requests of a workflow task by their author-chosen key (absent until the first offer). */
  offers?: Record<string, StandingOffer>;
  idempotencyKey?: string;
  /** The wire generation that created the task. */
  dialect: string;
  progressToken?: string | number;
  /**
   * The latest progress the work reported, wherever it runs: `tasks/get` carries it (`_meta`, every generation), and
   * the instance holding the requestor's connection relays it when the work runs in another process (a queue worker).
   */
  progress?: StoredProgress;
  /** How a tools/call result with `isError: true` ends: the generations disagree, so the dialect decides. */
  toolErrorStatus: 'failed' | 'completed';
  /** Whether the work may be run again after the process running it died. */
  retrySafe: boolean;
  /** The instance currently responsible for the work, and until when its claim holds. */
  runner?: string;
  leaseUntil?: number;
  startedAt?: number;
  terminalAt?: number;
  attempts: number;
  /**
   * The work returned while waiting for input and holds nothing in memory; answering every outstanding request hands
   * the task to the executor again.
   */
  suspended?: boolean;
  /** A suspended task's durable timer: the work runs again at this time (a sleep, a retry, a question's deadline). */
  wakeAt?: number;
  recovery?: RecoveryMark;
  /**
   * The statusMessage is the runtime's note (queued again, re-running after a lost run), not the work's: the work's
   * next message replaces it, and a task that completes without one drops it rather than end on a stale note.
   */
  statusNote?: boolean;
  /** Who cancelled the task (the requestor's owner scope, or the console), for its timeline. */
  cancelledBy?: string;
  /** Runs started again because the process running the task died (resumes after input do not count). */
  recoveries?: number;
  /** Journaled steps completed when the latest recovery found the task's run lost (workflow tasks; 0 otherwise). */
  stepsAtRecovery?: number;
  /**
   * Runs lost in a row without completing a new journaled step, counting the one the latest recovery found lost: it
   * falls back to 0 when a lost run had made progress (see `withRunProgress`).
   */
  stalledRuns?: number;
  /** Dialect- and server-specific data (session id, request id, tool name, ...). */
  meta: Record<string, unknown>;
  /** Incremented by every write; the compare-and-set token. */
  version: number;
}
