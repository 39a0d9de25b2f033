import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { Reporter } from '../Reporter.js';
import { UsageError } from '../UsageError.js';

export interface ServeOptions {
  port: string;
  host: string;
  stdio?: boolean;
}

type StartDemoServer = (options: { port: number; host: string; stdio: boolean }) => Promise<unknown> | unknown;

/** From dist/src/cli/commands/serve.js to dist/examples/demo/server.js. */
const DEMO_SERVER = new URL('../../../examples/demo/server.js', import.meta.url);

/** `serve`: the demo server, over Streamable HTTP or stdio, until interrupted. */
export async function runServe(options: ServeOptions, reporter: Reporter): Promise<ExitCode> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port is 0-65535; got "${options.port}"`);
  let start: StartDemoServer;
  try {
    const module = (await import(DEMO_SERVER.href)) as { startDemoServer?: StartDemoServer };
    if (typeof module.startDemoServer !== 'function') throw new Error('it does not export startDemoServer');
    start = module.startDemoServer;
  } catch (error) {
    reporter.error(new Error(`The demo server is not available (${(error as Error).message}); run npm run build`));
    return EXIT_CODES.failed;
  }
  const stdio = options.stdio === true;
  const running = (await start({ port, host: options.host, stdio })) as
    { url?: unknown; close?: () => unknown } | undefined;
  // Over stdio, stdout is the protocol: announcements go to stderr.
  if (!stdio && typeof running?.url === 'string') reporter.note(`serving on ${running.url}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await running?.close?.();
  return EXIT_CODES.completed;
}
