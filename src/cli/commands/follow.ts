import { openClient } from '../connect.js';
import { EXIT_CODES, exitCodeForOutcome, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import { followTaskEvents } from '../followTaskEvents.js';
import { onInterrupt } from '../interrupts.js';
import type { Reporter } from '../Reporter.js';

/**
 * `result <id>` and `watch <id>`: follow an existing task to its end, showing status as it changes. Ctrl-C stops
 * following; the task keeps running.
 */
export async function runFollow(
  taskId: string,
  withResult: boolean,
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const client = await openClient(global, server, reporter, taskId);
  let stopListening = () => undefined as unknown;
  try {
    const handle = await client.attach(taskId);
    reporter.started(handle);
    handle.onUpdate((snapshot) => reporter.update(snapshot));
    const events = followTaskEvents(handle, reporter);
    let interrupted: (code: ExitCode) => void = () => undefined;
    const stopped = new Promise<ExitCode>((resolve) => (interrupted = resolve));
    const stop = () => {
      handle.detach();
      interrupted(EXIT_CODES.interrupted);
    };
    stopListening = onInterrupt(stop, stop);
    const result = await Promise.race([handle.outcome(), stopped]);
    if (typeof result === 'number') {
      events.stop();
      return result;
    }
    await events.settled();
    reporter.outcome(result, withResult);
    return exitCodeForOutcome(result);
  } finally {
    stopListening();
    await client.close();
  }
}
