/**
 * The pause before a run's store write or read is tried again after the store failed: 200 ms doubling to 1 s. Short,
 * because each store call already waits for the store to come back (STORE_WAIT_MS) before it fails: a longer pause
 * would only delay the write after the store returned (the outcome of a run that outlived a 20 s outage was recorded
 * up to 5 s late). Resolves early once `signal` aborts, so a shutdown never waits out a back-off.
 */
export function retryPause(failures: number, signal: AbortSignal): Promise<void> {
  const ms = Math.min(200 * 2 ** failures, 1000);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
