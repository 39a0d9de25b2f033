import { openClient } from '../connect.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import type { Reporter } from '../Reporter.js';
import { summarizeTools } from '../ToolSummary.js';

/** `tools`: the server's tools with their task support and arguments (the fallback tools left out). */
export async function runTools(
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const client = await openClient(global, server, reporter);
  try {
    reporter.tools(summarizeTools(await client.listTools(), client.dialect));
    return EXIT_CODES.completed;
  } finally {
    await client.close();
  }
}
