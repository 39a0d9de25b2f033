/**
 * One behaviour for short outages of any store (and of the job queue's Redis): a statement waits up to
 * `STORE_WAIT_MS` for a connection, and only before it is sent, so one refused after the wait was never sent (a
 * creation refused so is not created); meanwhile the connection is tried again every `reconnectDelayMs` at most.
 */
export const STORE_WAIT_MS = 5000;

/** How soon a lost store or queue connection is tried again: 100 ms, 200 ms, … then every 500 ms. */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(100 * Math.max(1, attempt), 500);
}

/**
 * How long a creation may wait, behind its owner's earlier creations and for the store and the queue, before its
 * insert is sent; past it the creation is refused (-32603) and nothing is stored. Once sent, the insert is waited for.
 */
export const CREATE_WAIT_MS = 10_000;
