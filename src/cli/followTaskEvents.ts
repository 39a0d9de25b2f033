import type { TaskHandle } from '../client/index.js';
import type { Reporter } from './Reporter.js';

/**
 * Prints a task's intermediate results as they come (`call`, `watch`), where the task names an event source:
 * `handle.events()`, which still yields what the task emitted before its end once the handle saw it end (TS17, TS18)
 * and nothing after (TS19), so `settled()` resolves when the last of them is printed and the outcome line comes after
 * it. A subscription that fails is a note, never the task's failure (TS16).
 */
export function followTaskEvents(handle: TaskHandle, reporter: Reporter): { settled(): Promise<void>; stop(): void } {
  const stop = new AbortController();
  if (handle.eventSource === undefined) return { settled: () => Promise.resolve(), stop: () => undefined };
  const following = (async () => {
    try {
      // spec TS16: a refused subscription is told, and the task is followed on.
      const onError = (error: { code: number; message: string }) =>
        reporter.note(`The task's events are not available [${error.code}]: ${error.message}`);
      for await (const event of handle.events({ signal: stop.signal, onError })) reporter.event(event, true);
    } catch (error) {
      reporter.note(`The task's events could not be followed: ${(error as Error).message}`);
    }
  })();
  return { settled: () => following, stop: () => stop.abort() };
}
