import { openClient } from '../connect.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import type { Reporter } from '../Reporter.js';

/** `get <id>`: one `tasks/get`, printed. */
export async function runGet(
  taskId: string,
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const client = await openClient(global, server, reporter, taskId, false);
  try {
    reporter.snapshot(await client.getTask(taskId));
    return EXIT_CODES.completed;
  } finally {
    await client.close();
  }
}
