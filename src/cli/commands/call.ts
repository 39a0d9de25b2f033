import type { CallMode } from '../../client/index.js';
import { parseJsonObject, parseKeyValues } from '../argv.js';
import { checkArguments } from '../checkArguments.js';
import { openClient } from '../connect.js';
import { EXIT_CODES, exitCodeForOutcome, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import { followTaskEvents } from '../followTaskEvents.js';
import { onInterrupt } from '../interrupts.js';
import type { Reporter } from '../Reporter.js';
import { UsageError } from '../UsageError.js';

export interface CallOptions {
  args?: string;
  detach?: boolean;
  mode: string;
  /** `--no-validate`: send the arguments without checking them against the tool's input schema. */
  validate: boolean;
}

function modeOf(value: string): CallMode {
  if (value === 'auto' || value === 'task' || value === 'plain') return value;
  throw new UsageError(`--mode is auto, task or plain; got "${value}"`);
}

/** `call <tool> [k=v ...]`: runs the tool (as a task where possible) and reports until it ends; Ctrl-C cancels. */
export async function runCall(
  tool: string,
  pairs: string[],
  options: CallOptions,
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const args = {
    ...(options.args === undefined ? {} : parseJsonObject(options.args, '--args')),
    ...parseKeyValues(pairs),
  };
  const mode = modeOf(options.mode);
  const client = await openClient(global, server, reporter);
  let stopListening = () => undefined as unknown;
  try {
    if (options.validate !== false) {
      // A misspelt argument would otherwise be dropped or refused by the server only after a task was made.
      // A server that cannot list its tools (a proxy whose upstream is down) still gets the call, which says why.
      const tools = await client.listTools().catch(() => []);
      const known = tools.find((candidate) => candidate.name === tool);
      if (known !== undefined) checkArguments(tool, known.inputSchema, args);
    }
    const handle = await client.callTool(tool, args, { mode, follow: options.detach !== true });
    // SEP-1686 names the task before the server confirms it; report it as a task only once it is one.
    const isTask = await handle.accepted();
    if (options.detach === true) {
      if (isTask) {
        if (server !== undefined) {
          reporter.note(
            'The server is a child of this command: the task ends with it unless the server keeps its tasks',
          );
        }
        reporter.detached(handle);
        handle.detach();
        return EXIT_CODES.completed;
      }
      reporter.note('The server runs this call plainly, so there is no task to detach from; waiting for the answer');
    }
    reporter.started(handle);
    handle.onUpdate((snapshot) => reporter.update(snapshot));
    const events = followTaskEvents(handle, reporter);
    let interrupted: (code: ExitCode) => void = () => undefined;
    const stopped = new Promise<ExitCode>((resolve) => (interrupted = resolve));
    stopListening = onInterrupt(
      () => {
        reporter.note('Cancelling… (Ctrl-C again to stop waiting)');
        handle.cancel().catch((error: unknown) => reporter.error(error));
      },
      () => interrupted(EXIT_CODES.interrupted),
    );
    const result = await Promise.race([handle.outcome(), stopped]);
    if (typeof result === 'number') {
      events.stop();
      return result;
    }
    await events.settled();
    reporter.outcome(result, true);
    return exitCodeForOutcome(result);
  } finally {
    stopListening();
    await client.close();
  }
}
