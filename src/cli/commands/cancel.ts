import { openClient } from '../connect.js';
import { exitCodeForOutcome, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import type { Reporter } from '../Reporter.js';

/** `cancel <id>`: cancels, then reports the server's final word (cancelled, or completed/failed if the work won). */
export async function runCancel(
  taskId: string,
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const client = await openClient(global, server, reporter, taskId);
  try {
    const outcome = await client.cancelTask(taskId);
    reporter.outcome(outcome, false);
    return exitCodeForOutcome(outcome);
  } finally {
    await client.close();
  }
}
