import type { TaskStatus } from './TaskStatus.js';

/**
 * Typed engine errors. They carry no JSON-RPC codes: `src/rpc/` maps them to the wire in one place.
 */
export abstract class TaskError extends Error {
  abstract readonly kind: string;
}

/** The task does not exist, or belongs to another owner: the two are deliberately indistinguishable. */
export class TaskNotFoundError extends TaskError {
  readonly kind = 'not_found';
  constructor(readonly taskId: string) {
    super('Task not found');
  }
}

export class TaskExpiredError extends TaskError {
  readonly kind = 'expired';
  constructor(readonly taskId: string) {
    super('Task has expired');
  }
}

export class InvalidTransitionError extends TaskError {
  readonly kind = 'invalid_transition';
  constructor(
    readonly taskId: string,
    readonly from: TaskStatus,
    readonly to: TaskStatus,
  ) {
    super(`Invalid task transition: ${from} -> ${to}`);
  }
}

/** The operation needs a non-terminal task. */
export class TaskTerminalError extends TaskError {
  readonly kind = 'terminal';
  constructor(
    readonly taskId: string,
    readonly status: TaskStatus,
  ) {
    super(`Task is already in terminal status '${status}'`);
  }
}

/** An idempotency key (or client-chosen id) is already used by a different request. */
export class TaskConflictError extends TaskError {
  readonly kind = 'conflict';
  constructor(
    readonly idempotencyKey: string,
    readonly existingTaskId: string,
  ) {
    super(`Idempotency key already used by a different request: ${idempotencyKey}`);
  }
}

export class InvalidCursorError extends TaskError {
  readonly kind = 'invalid_cursor';
  constructor(readonly reason: 'malformed' | 'forged' | 'foreign' | 'stale') {
    super(reason === 'stale' ? 'Cursor has expired' : 'Invalid cursor');
  }
}

/** A documented limit was reached (concurrent tasks per owner, rate). */
export class TaskLimitError extends TaskError {
  readonly kind = 'limit';
  constructor(
    readonly limit: 'concurrent_tasks' | 'stored_tasks' | 'stored_bytes' | 'total_bytes' | 'rate',
    message: string,
    /** When trying again may succeed, and what else the refusal tells the caller (`error.data` on the wire). */
    readonly details?: { retryAfterMs: number; [key: string]: unknown },
  ) {
    super(message);
  }
}

/** Stored data over its size cap (see EngineLimits): the request's arguments, or an input answer. */
export class TaskTooLargeError extends TaskError {
  readonly kind = 'too_large';
  constructor(
    readonly what: 'arguments' | 'input',
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    const size = Number.isFinite(bytes) ? `${bytes} bytes` : 'too deeply nested to measure';
    super(`${what === 'arguments' ? 'Arguments' : 'Input answer'} too large: ${size}, the limit is ${maxBytes} bytes`);
  }
}

/** Requestor data nested deeper than `EngineLimits.maxJsonDepth`; refused before anything is stored. */
export class TaskTooDeepError extends TaskError {
  readonly kind = 'too_deep';
  constructor(
    readonly what: 'params' | 'input',
    readonly maxDepth: number,
  ) {
    super(`${what === 'params' ? 'Request params' : 'Input answer'} nested deeper than ${maxDepth} levels`);
  }
}

/** The executor could not accept the work (e.g. the job queue is unreachable); the task was not created. */
export class ExecutorUnavailableError extends TaskError {
  readonly kind = 'executor_unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export class StoreUnavailableError extends TaskError {
  readonly kind = 'store_unavailable';
  /**
   * What is known of the failure, for the requestor: the store's disk is full (nothing was stored), or a creation
   * was refused after waiting its bound (CREATE_WAIT_MS) for the store or the queue (nothing was stored), or a
   * creation's insert lost its reply and the store did not come back in time to tell (removed if it was stored).
   */
  readonly reason: 'disk_full' | 'not_created' | 'not_confirmed' | undefined;
  constructor(message: string, options?: { cause?: unknown; reason?: 'disk_full' | 'not_created' | 'not_confirmed' }) {
    super(message, options);
    this.reason = options?.reason;
  }

  /** A store that could not be opened, in one line naming it (`store`, e.g. "the PostgreSQL store …") and the cause. */
  static opening(store: string, error: unknown): StoreUnavailableError {
    const cause = error instanceof Error ? error.message || error.name : String(error);
    return new StoreUnavailableError(cause.startsWith(store) ? cause : `Cannot open ${store}: ${cause}`, {
      cause: error,
    });
  }
}

/** A connection URL fit for a message: its password replaced, so start-up errors never print a secret. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}

export function isTaskError(error: unknown): error is TaskError {
  return error instanceof TaskError;
}

/**
 * An event a task's work emitted was not stored: its type is not registered, its data does not match the type's
 * payloadSchema, it is over `EngineLimits.maxEventBytes`, the task's log holds `eventsPerTask` entries, or the task
 * has ended (or is gone). Thrown to the emitting handler; nothing reaches the requestor.
 */
export class TaskEventRejectedError extends TaskError {
  readonly kind = 'event_rejected';
  constructor(
    readonly reason: 'unknown_type' | 'invalid_payload' | 'too_large' | 'events_per_task' | 'task_ended',
    message: string,
  ) {
    super(message);
  }
}
