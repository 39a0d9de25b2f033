import { OFFER_KEY_PATTERN, type SerializedError } from '../engine/index.js';

/** Thrown by a step's closure for a permanent failure: the step fails at once, without the retries left. */
export class NonRetryableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NonRetryableError';
  }
}

/** A step's closure ran past its `timeoutMs`; the attempt counts as failed and follows the retry policy. */
export class StepTimeoutError extends Error {
  constructor(name: string, timeoutMs: number) {
    super(`Step "${name}" timed out after ${timeoutMs}ms`);
    this.name = 'StepTimeoutError';
  }
}

/** The task ran past the workflow's `timeoutMs` (counted from its creation): no further step starts. */
export class TaskTimeoutError extends NonRetryableError {
  constructor(timeoutMs: number) {
    super(`The task ran past its timeout of ${timeoutMs}ms`);
    this.name = 'TaskTimeoutError';
  }
}

/** A step name was used twice in one run: names are the journal's keys (suffix an index in loops). */
export class DuplicateStepError extends Error {
  constructor(name: string) {
    super(`Step name "${name}" was already used in this task; step names must be unique (suffix an index in loops)`);
    this.name = 'DuplicateStepError';
  }
}

/** `checkInput` named a key no `offer` registered. */
export class UnknownOfferError extends Error {
  constructor(name: string, key: string) {
    super(`Step "${name}" checks input "${key}", which is not an offer of this task`);
    this.name = 'UnknownOfferError';
  }
}

/** Offer keys travel in wire ids, so they are plain and bounded (docs/limits.md). */
export function assertOfferKey(key: string): void {
  if (!OFFER_KEY_PATTERN.test(key)) {
    throw new TypeError(`Invalid offer key ${JSON.stringify(key)}: use 1-128 letters, digits, "_", "-" or "."`);
  }
}

/** A step's result could not be journaled (not JSON, or too large); it fails without retries. */
export class StepResultError extends NonRetryableError {
  constructor(name: string, reason: string) {
    super(`The result of step "${name}" cannot be journaled: ${reason}`);
  }
}

/** By name as well as by class, so an error of the same name from another library (or a revived one) counts. */
export function isNonRetryable(error: unknown): boolean {
  if (error instanceof NonRetryableError) return true;
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'NonRetryableError';
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof Error) return { name: error.name || 'Error', message: error.message };
  return { name: 'Error', message: String(error) };
}

/** The error a failed step throws again on every replay. */
export function reviveError(error: SerializedError): Error {
  const revived = error.name === 'NonRetryableError' ? new NonRetryableError(error.message) : new Error(error.message);
  revived.name = error.name;
  return revived;
}
