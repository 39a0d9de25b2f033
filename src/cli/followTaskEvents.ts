import type { TaskClient, TaskHandle } from '../client/index.js';
import type { Reporter } from './Reporter.js';

/**
 * How long a task's end waits for the rest of its events before its outcome is printed: the server ends a task's
 * subscription within 2 s of the end (its drain, spec TS9).
 */
const EVENTS_SETTLE_MS = 3000;

/**
 * Prints a task's intermediate results as they come (`call`, `watch`), where the task names an event source. The
 * follow is the client's `followEvents`, not `handle.events()`: that one drops what arrives after the handle saw the
 * end (TS19), and a quick task's last events often do; here every event the task emitted is printed, and none after
 * the outcome line, which is what TS19 is for. A subscription that fails is a note, never the task's failure (TS16).
 */
export function followTaskEvents(
  client: TaskClient,
  handle: TaskHandle,
  reporter: Reporter,
): { settled(): Promise<void>; stop(): void } {
  const source = handle.eventSource;
  const stop = new AbortController();
  if (source === undefined) return { settled: () => Promise.resolve(), stop: () => undefined };
  const following = (async () => {
    try {
      // spec TS16: a refused subscription is told, and the task is followed on.
      const onError = (error: { code: number; message: string }) =>
        reporter.note(`The task's events are not available [${error.code}]: ${error.message}`);
      for await (const event of client.followEvents(source, { signal: stop.signal, onError }))
        reporter.event(event, true);
    } catch (error) {
      reporter.note(`The task's events could not be followed: ${(error as Error).message}`);
    }
  })();
  return {
    settled: async () => {
      const timer = setTimeout(() => stop.abort(), EVENTS_SETTLE_MS);
      await following;
      clearTimeout(timer);
    },
    stop: () => stop.abort(),
  };
}
