import {
  TaskClientError,
  TaskConnectionError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskProtocolError,
  type TaskOutcome,
} from '../client/index.js';

/** Exit codes of `mcp-tasks`; documented in docs/client.md. */
export const EXIT_CODES = {
  /** The task (or call) completed; or a command without a task outcome succeeded. */
  completed: 0,
  /** The task failed: a tool error result or the underlying request's JSON-RPC error. */
  failed: 1,
  /** The command line was wrong. */
  usage: 2,
  /** Could not reach the server, the connection dropped, or its answers were malformed. */
  connection: 3,
  /** The task ended cancelled. */
  cancelled: 4,
  /** The server does not know the task id (never existed, expired or deleted). */
  notFound: 5,
  /** The server or dialect does not support the operation (e.g. no tasks/cancel, or a forbidden task mode). */
  notSupported: 6,
  /** Stopped following with a second Ctrl-C, or Ctrl-C in `watch` / `result` (the task keeps running). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

export function exitCodeForOutcome(outcome: TaskOutcome): ExitCode {
  return EXIT_CODES[outcome.status];
}

export function exitCodeForError(error: unknown): ExitCode {
  if (error instanceof TaskNotFoundError) return EXIT_CODES.notFound;
  if (error instanceof TaskNotSupportedError) return EXIT_CODES.notSupported;
  if (error instanceof TaskConnectionError || error instanceof TaskProtocolError) return EXIT_CODES.connection;
  if (error instanceof TaskClientError) return EXIT_CODES.failed;
  return EXIT_CODES.failed;
}
