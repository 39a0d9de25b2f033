import { openClient } from '../connect.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import type { Reporter } from '../Reporter.js';

/** `list`: the server's tasks (or, for the extension, the tasks this client stored for that server). */
export async function runList(
  options: { cursor?: string },
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const client = await openClient(global, server, reporter);
  try {
    reporter.list(await client.listTasks(options.cursor));
    return EXIT_CODES.completed;
  } finally {
    await client.close();
  }
}
