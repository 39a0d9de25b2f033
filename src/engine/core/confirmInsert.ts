import { OutcomeUnknownError } from '../contracts/OutcomeUnknownError.js';
import type { InsertResult } from '../contracts/TaskStore.js';
import { StoreUnavailableError } from '../record/TaskError.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import { reconnectDelayMs, STORE_WAIT_MS } from './storeWait.js';
import type { TaskAccess } from './TaskAccess.js';

/** Thrown when an insert's outcome stayed unknown to its bound; the creation is refused and the id tidied later. */
export class UnconfirmedInsertError extends StoreUnavailableError {
  constructor(
    readonly taskId: string,
    waitedMs: number,
    options: { cause?: unknown },
  ) {
    super(
      `The task store lost the connection while storing the task and did not answer within ${waitedMs} ms; the task is treated as not created and is removed if it was stored.`,
      { ...options, reason: 'not_confirmed' },
    );
  }
}

/**
 * Sends an insert and settles its outcome. A connection lost after the insert was sent leaves it unknown whether the
 * store applied it (a Redis killed after writing its append-only file, a PostgreSQL connection cut after COMMIT): the
 * reply, not the write, was lost. Answering "not created" then would leave a phantom task that runs while the
 * requestor, told to try again, runs the work twice. So the id is read back once the store answers again: present,
 * the insert was applied; absent, the lost connection can no longer apply it (its server closed or restarted), so it
 * is sent again, and a late original would find the id taken. Tried until `deadline` (at least STORE_WAIT_MS after the
 * loss); still unknown then, UnconfirmedInsertError.
 */
export async function confirmInsert(
  access: TaskAccess,
  record: TaskRecord,
  insert: () => Promise<InsertResult>,
  deadline: number,
): Promise<InsertResult> {
  let lost: unknown;
  try {
    return await access.guard(insert);
  } catch (error) {
    // Refused unsent, or refused by the store: nothing was applied.
    if (!mayHaveApplied(error)) throw error;
    lost = error;
  }
  const bound = Math.max(deadline, Date.now() + STORE_WAIT_MS);
  const began = Date.now();
  for (let attempt = 1; Date.now() < bound; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(reconnectDelayMs(attempt), bound - Date.now())));
    try {
      if (isOurs(record, await access.guard(() => access.store.get(record.taskId)))) return { inserted: true };
      const again = await access.guard(insert);
      // A late original won the race with the resend: the id or the key it holds is this very task.
      if (!again.inserted && again.reason === 'duplicate_id' && isOurs(record, await access.read(record.taskId))) {
        return { inserted: true };
      }
      if (!again.inserted && again.reason === 'duplicate_key' && again.existing.taskId === record.taskId) {
        return { inserted: true };
      }
      return again;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || error.reason === 'disk_full') throw error;
      lost = error;
    }
  }
  throw new UnconfirmedInsertError(record.taskId, Date.now() - began, { cause: lost });
}

/** A failure after which the insert may still have been applied: the store says its outcome is unknown. */
function mayHaveApplied(error: unknown): boolean {
  return error instanceof StoreUnavailableError && error.cause instanceof OutcomeUnknownError;
}

/** The stored record is the one this creation sent (not a task of another creation with a colliding id). */
function isOurs(record: TaskRecord, stored: TaskRecord | undefined): boolean {
  return stored !== undefined && stored.owner === record.owner && stored.createdAt === record.createdAt;
}
