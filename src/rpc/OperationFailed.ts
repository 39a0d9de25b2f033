import type { TaskOperation } from './TaskOperation.js';

/**
 * An error raised while a request did one thing among several (a call that creates a task, then follows it), so the
 * mapping reports it as a failure of that thing rather than of what the request's method suggests.
 */
export class OperationFailed extends Error {
  constructor(
    readonly operation: TaskOperation,
    readonly error: unknown,
  ) {
    super(error instanceof Error ? error.message : String(error));
  }
}

/** Awaits `work`; what it throws is mapped as a failure of `operation`. */
export async function during<T>(operation: TaskOperation, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw new OperationFailed(operation, error);
  }
}
