import { serveConsole } from '../../console/index.js';
import { createStore, DEFAULT_STORE, openStandaloneConsole } from '../../server/index.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { Reporter } from '../Reporter.js';
import { stderrLogger } from '../stderrLogger.js';
import { UsageError } from '../UsageError.js';

export interface ConsoleCommandOptions {
  store?: string;
  port: string;
  host: string;
  path: string;
  /** Host names the console answers to besides localhost (comma-separated), for --host 0.0.0.0 behind a name. */
  allowedHosts?: string;
}

/** `console`: the operator's web console over a task store, until interrupted. Prints a URL that opens it. */
export async function runConsoleCommand(options: ConsoleCommandOptions, reporter: Reporter): Promise<ExitCode> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port is 0-65535; got "${options.port}"`);
  const store = await createStore(options.store ?? process.env['MCP_TASKS_STORE'] ?? DEFAULT_STORE);
  const extra = (options.allowedHosts ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const { taskConsole, close } = await openStandaloneConsole(
    store,
    { path: options.path, allowedHostnames: ['localhost', '127.0.0.1', '[::1]', ...extra] },
    stderrLogger('console', false),
  );
  const running = await serveConsole(taskConsole, { port, host: options.host });
  const token = process.env['MCP_TASKS_CONSOLE_TOKEN'] ? '' : ' (token generated for this run)';
  // Like Jupyter: one URL that opens the console and leaves a cookie, so the token need not be typed.
  reporter.note(`mcp-tasks console on ${running.url} over the ${store.kind} store${token}`);
  reporter.note(`open: ${running.openUrl}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await running.close();
  close();
  await store.close();
  return EXIT_CODES.completed;
}
