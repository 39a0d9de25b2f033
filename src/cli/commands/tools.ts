import { openClient } from '../connect.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import type { Reporter } from '../Reporter.js';

/** `tools`: the server's tools with their task support. */
export async function runTools(
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const client = await openClient(global, server, reporter);
  try {
    reporter.tools(await client.listTools());
    return EXIT_CODES.completed;
  } finally {
    await client.close();
  }
}
