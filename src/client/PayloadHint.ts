import type { TaskPayload } from './TaskOutcome.js';

/** A payload that may arrive without polling: SEP-1686's original response, or 2025-11-25's blocking tasks/result. */
export interface PayloadHint {
  promise: Promise<TaskPayload>;
  value?: TaskPayload;
  failed: boolean;
}

/** Watches a request that may carry the payload; `arrived` runs when it does (the poll loop wakes). */
export function watchPayload(promise: Promise<TaskPayload>, arrived: () => void): PayloadHint {
  const hint: PayloadHint = { promise, failed: false };
  promise.then(
    (value) => {
      hint.value = value;
      arrived();
    },
    () => {
      hint.failed = true;
    },
  );
  return hint;
}

/** Whether a request that will carry the payload is still open (not failed, not answered). */
export function isAwaiting(hint: PayloadHint | undefined): boolean {
  return hint !== undefined && !hint.failed && hint.value === undefined;
}

/** The hint's payload if it arrives within `graceMs`, else `undefined`. */
export async function payloadWithin(hint: PayloadHint, graceMs: number): Promise<TaskPayload | undefined> {
  return Promise.race([
    hint.promise.catch(() => undefined),
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), graceMs).unref()),
  ]);
}
