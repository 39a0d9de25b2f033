import {
  TaskNotFoundError,
  TaskNotSupportedError,
  type HandleStore,
  type StoredHandle,
  type TaskClient,
  type TaskList,
  type TaskSnapshot,
} from '../../client/index.js';
import { connectCli } from '../connect.js';
import { EXIT_CODES, type ExitCode } from '../exitCodes.js';
import type { GlobalOptions } from '../GlobalOptions.js';
import type { Reporter } from '../Reporter.js';

/** `tasks/get` requests in flight at once while the stored handles are looked up. */
const LOOKUPS_AT_ONCE = 8;

/**
 * `list`: the tasks this user created on the server, from any run: the server's own list where it has one (on a
 * 2025-era session that every run reuses), joined on the first page by every task handle stored for this server and
 * dialect that the server still holds (one `tasks/get` each). A handle the server no longer knows, asked in its own
 * session (or with none), leaves the store.
 */
export async function runList(
  options: { cursor?: string },
  global: GlobalOptions,
  server: string[] | undefined,
  reporter: Reporter,
): Promise<ExitCode> {
  const { client, store, key } = await connectCli(global, server, reporter);
  try {
    let list: TaskList | undefined;
    try {
      list = await client.listTasks(options.cursor);
    } catch (error) {
      if (!(error instanceof TaskNotSupportedError)) throw error;
    }
    if (store === undefined || options.cursor !== undefined) {
      if (list === undefined)
        throw new TaskNotSupportedError('tasks/list', 'The server lists no tasks and --no-store is set');
      reporter.list(list);
      return EXIT_CODES.completed;
    }
    // Where the dialect has no list, the client answered from the store: asked again below, and pruned.
    if (list?.source === 'store') list = undefined;
    const listed = new Set((list?.tasks ?? []).map((task) => task.taskId));
    const records = (await store.list()).filter(
      (record) => record.target === key && record.dialect === client.dialect && !listed.has(record.taskId),
    );
    const stored = await lookUp(client, store, records);
    reporter.list({
      tasks: [...(list?.tasks ?? []), ...stored],
      ...(list?.nextCursor !== undefined && { nextCursor: list.nextCursor }),
      source: list?.source ?? 'store',
    });
    return EXIT_CODES.completed;
  } finally {
    await client.close();
  }
}

/** The stored tasks the server still holds, newest first, a few lookups at a time. */
async function lookUp(client: TaskClient, store: HandleStore, records: StoredHandle[]): Promise<TaskSnapshot[]> {
  const queue = [...records].sort((a, b) => b.storedAt.localeCompare(a.storedAt));
  const found = new Map<string, TaskSnapshot>();
  const worker = async () => {
    for (let record = queue.shift(); record !== undefined; record = queue.shift()) {
      try {
        found.set(record.taskId, await client.getTask(record.taskId));
      } catch (error) {
        if (!(error instanceof TaskNotFoundError)) throw error;
        // Asked in another session, "not found" may only mean "not yours here": that handle stays.
        if (record.sessionId === undefined || record.sessionId === client.sessionId) await store.remove(record.taskId);
      }
    }
  };
  await Promise.all(Array.from({ length: LOOKUPS_AT_ONCE }, worker));
  return records
    .sort((a, b) => b.storedAt.localeCompare(a.storedAt))
    .flatMap((record) => {
      const snapshot = found.get(record.taskId);
      return snapshot === undefined ? [] : [snapshot];
    });
}
