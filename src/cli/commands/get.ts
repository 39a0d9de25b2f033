import { readTaskHistory } from '../../console/index.js';
import { createStore, DEFAULT_STORE } from '../../server/index.js';
import { openClient } from '../connect.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import type { Reporter } from '../Reporter.js';

export interface GetOptions {
  /** Print the task's timeline, read from the task store. */
  timeline?: boolean;
  /** The task store for `--timeline` (default $MCP_TASKS_STORE, else the SQLite default). */
  taskStore?: string;
}

/** `get <id>`: one `tasks/get`, printed; with `--timeline`, the stored task and its transitions. */
export async function runGet(
  taskId: string,
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
  options: GetOptions = {},
): Promise<ExitCode> {
  if (options.timeline) return printTimeline(taskId, options, reporter);
  const client = await openClient(global, server, reporter, taskId);
  try {
    reporter.snapshot(await client.getTask(taskId));
    return EXIT_CODES.completed;
  } finally {
    await client.close();
  }
}

async function printTimeline(taskId: string, options: GetOptions, reporter: Reporter): Promise<ExitCode> {
  const store = await createStore(options.taskStore ?? process.env['MCP_TASKS_STORE'] ?? DEFAULT_STORE);
  try {
    const history = await readTaskHistory(store, taskId);
    if (!history) {
      reporter.note(`task ${taskId} is not in the task store`);
      return EXIT_CODES.notFound;
    }
    reporter.timeline(history.task, history.timeline);
    return EXIT_CODES.completed;
  } finally {
    await store.close();
  }
}
