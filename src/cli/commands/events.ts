import { TaskRpcError, type RpcErrorObject } from '../../client/index.js';
import { parseJsonObject, parseKeyValues } from '../argv.js';
import { openClient } from '../connect.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import { onInterrupt } from '../interrupts.js';
import type { Reporter } from '../Reporter.js';
import { UsageError } from '../UsageError.js';

/** What `events poll|stream|webhook` name: the type's arguments (`--task` is `taskId=`), and where to start. */
export interface EventsTargetOptions {
  args?: string;
  task?: string;
  cursor?: string;
}

export interface EventsPollOptions extends EventsTargetOptions {
  maxEvents?: string;
  maxAgeMs?: string;
}

/** The type's arguments from `--args`, `--task` and key=value pairs (the latter win). */
export function eventArguments(pairs: string[], options: EventsTargetOptions): Record<string, unknown> {
  return {
    ...(options.args === undefined ? {} : parseJsonObject(options.args, '--args')),
    ...(options.task !== undefined && { taskId: options.task }),
    ...parseKeyValues(pairs),
  };
}

export function wholeNumber(value: string | undefined, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${what} is a whole number; got "${value}"`);
  return Number(value);
}

/** `events list`: the server's event types, their delivery modes and descriptions. */
export async function runEventsList(
  options: { cursor?: string },
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const client = await openClient(global, server, reporter);
  try {
    reporter.eventTypes(await client.events().list(options.cursor));
    return EXIT_CODES.completed;
  } finally {
    await client.close();
  }
}

/** `events poll <type>`: one `events/poll` from `--cursor` (from now without one), and the cursor to send next. */
export async function runEventsPoll(
  name: string,
  pairs: string[],
  options: EventsPollOptions,
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const args = eventArguments(pairs, options);
  const maxEvents = wholeNumber(options.maxEvents, '--max-events');
  const maxAgeMs = wholeNumber(options.maxAgeMs, '--max-age-ms');
  const client = await openClient(global, server, reporter);
  try {
    const result = await client.events().poll(name, args, {
      cursor: options.cursor ?? null,
      ...(maxEvents !== undefined && { maxEvents }),
      ...(maxAgeMs !== undefined && { maxAgeMs }),
    });
    for (const event of result.events) reporter.event(event, false);
    reporter.polled(result);
    return EXIT_CODES.completed;
  } finally {
    await client.close();
  }
}

/**
 * `events stream <type>`: prints each event as it comes on an `events/stream` (polling where push is refused) until
 * the server ends the subscription (a task's, when the task ends) or Ctrl-C.
 */
export async function runEventsStream(
  name: string,
  pairs: string[],
  options: EventsTargetOptions,
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const args = eventArguments(pairs, options);
  const client = await openClient(global, server, reporter);
  const stop = new AbortController();
  const stopListening = onInterrupt(
    () => stop.abort(),
    () => stop.abort(),
  );
  try {
    let last: string | null = options.cursor ?? null;
    let refused: TaskRpcError | undefined;
    const onError = (error: RpcErrorObject) => (refused = new TaskRpcError(error));
    for await (const event of client.events().stream(name, args, { cursor: last, signal: stop.signal, onError })) {
      reporter.event(event, false);
      last = event.cursor ?? last;
    }
    if (refused !== undefined) {
      reporter.error(refused);
      return EXIT_CODES.failed;
    }
    if (stop.signal.aborted) {
      if (last !== null) reporter.note(`Stopped; resume with --cursor ${last}`);
      return EXIT_CODES.interrupted;
    }
    reporter.note('The subscription ended');
    return EXIT_CODES.completed;
  } finally {
    stopListening();
    await client.close();
  }
}
