import { setTimeout as sleep } from 'node:timers/promises';

import { StoreUnavailableError } from '../../engine/index.js';

/**
 * How long one attempt may hold the event loop in SQLite's own busy handler. Everything else of a wait for another
 * process's lock happens between attempts, on timers, so unrelated requests go on meanwhile.
 */
export const BLOCKING_BUSY_MS = 10;

/** SQLITE_BUSY and its extended codes (another connection holds the lock), and SQLITE_LOCKED. */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * Runs `operation` (synchronous SQLite work behind a promise) and, while it fails because the file is busy, runs it
 * again after a growing pause (5 ms doubling to 100 ms) until `boundMs` have passed; then gives up with a
 * StoreUnavailableError naming the store. A failed attempt has rolled back, so running it again is safe.
 */
export async function retryBusy<T>(operation: () => Promise<T>, store: string, boundMs: number): Promise<T> {
  const start = Date.now();
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      return await operation();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const waited = Date.now() - start;
      if (waited >= boundMs)
        throw new StoreUnavailableError(`${store} is locked by another process (still busy after ${waited} ms)`, {
          cause: error,
        });
      await sleep(Math.min(pause, boundMs - waited));
    }
  }
}

/** Replaces each named async method of `target` with one that retries while the file is busy (see retryBusy). */
export function retryWhenBusy<T extends object>(
  target: T,
  methods: ReadonlyArray<keyof T & string>,
  store: string,
  boundMs: number,
): void {
  for (const name of methods) {
    const original = target[name] as unknown as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(target, name, {
      value: (...args: unknown[]) => retryBusy(() => original.apply(target, args), store, boundMs),
    });
  }
}
