/** A signal that also aborts once a deadline passes; `clear()` drops the timer when the work ends first. */
export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

/**
 * `signal`, also aborted after `ms` with a `TimeoutError`, as `AbortSignal.timeout` would. Not
 * `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 nothing holds a timeout signal that only a combined
 * signal refers to (it refers to it weakly), so a garbage collection before the deadline takes it and its timer, and
 * the deadline never comes (nodejs/node#57736). A plain timer is held by the event loop until it fires or is cleared.
 */
export function withDeadline(signal: AbortSignal, ms: number): Deadline {
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  // Like AbortSignal.timeout's timer, it does not keep the process alive by itself.
  timer.unref();
  return { signal: AbortSignal.any([signal, timeout.signal]), clear: () => clearTimeout(timer) };
}
