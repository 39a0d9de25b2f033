import type { CancelAck, TaskDialect } from './dialects/TaskDialect.js';
import { TaskNotFoundError, TaskRpcError, type TaskClientError } from './TaskClientError.js';
import { isTerminalStatus } from './TaskStatus.js';

/**
 * Lenient in what it accepts: a server that refuses the cancel of a finished task with some other error than
 * spec R49's -32602 (often -32603) has still said the task is over; `tasks/get` shows whether it is, and then
 * the refusal counts as R49's. Any other failure of the cancel stays an error (`undefined`).
 */
export async function laxCancelRefusal(
  dialect: TaskDialect,
  taskId: string,
  failure: TaskClientError,
): Promise<CancelAck | undefined> {
  if (!(failure instanceof TaskRpcError) || failure instanceof TaskNotFoundError) return undefined;
  try {
    const poll = await dialect.get(taskId);
    if (!isTerminalStatus(poll.snapshot.status)) return undefined;
  } catch {
    return undefined;
  }
  return { kind: 'rejected', error: failure.error };
}
