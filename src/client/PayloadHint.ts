import type { PollResult, TaskDialect } from './dialects/TaskDialect.js';
import type { TaskPayload } from './TaskOutcome.js';

/** How long a pending payload request may take to answer once tasks/get says the task is terminal. */
const PAYLOAD_GRACE_MS = 3000;

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

/** The payload for a terminal status: inlined, already arrived, still arriving, or fetched now. */
export async function finalPayload(
  poll: PollResult,
  hint: PayloadHint | undefined,
  dialect: Pick<TaskDialect, 'payload'>,
): Promise<TaskPayload | undefined> {
  if (poll.payload !== undefined) return poll.payload;
  const { status } = poll.snapshot;
  if (status !== 'completed' && status !== 'failed') return undefined;
  if (hint !== undefined && !hint.failed) {
    // A request still carrying the payload answers promptly once the task is terminal; one whose stream silently
    // dropped never will, so it only gets a short grace before the payload is asked for again.
    const arrived = await payloadWithin(hint, PAYLOAD_GRACE_MS);
    if (arrived !== undefined) return arrived;
  }
  return dialect.payload(poll.snapshot);
}
