import type { CancelAck } from './dialects/TaskDialect.js';
import { outcomeOf, type TaskOutcome, type TaskPayload } from './TaskOutcome.js';
import type { TaskSnapshot } from './TaskSnapshot.js';

/**
 * The outcomes a handle concludes without a terminal `tasks/get`: the call's own response (a plain call, or SEP-1686
 * answering the call itself), and a cancel whose acknowledgement was the final word (spec R52).
 */
export function answeredOutcome(latest: TaskSnapshot, payload: TaskPayload): TaskOutcome {
  const failed = payload.kind === 'error' || payload.result.isError === true;
  const { cancelRequested: _local, ...server } = latest;
  return outcomeOf({ ...server, status: failed ? 'failed' : 'completed' }, payload);
}

/** Cancelled, with the acknowledgement's snapshot where it had one; `message` only if that snapshot has none. */
export function cancelledOutcome(latest: TaskSnapshot, ack: CancelAck | undefined, message?: string): TaskOutcome {
  const ackSnapshot = ack?.kind === 'accepted' ? ack.snapshot : undefined;
  const snapshot: TaskSnapshot = {
    ...latest,
    ...ackSnapshot,
    status: 'cancelled',
    ...(message !== undefined && ackSnapshot?.statusMessage === undefined && { statusMessage: message }),
  };
  delete snapshot.cancelRequested;
  return outcomeOf(snapshot, undefined);
}

/** A plain call's outcome: its answer; or cancelled, when the call fails after the client cancelled it. */
export async function plainCallOutcome(
  handle: { readonly snapshot: TaskSnapshot; readonly cancelAcknowledgement: CancelAck | undefined },
  payload: Promise<TaskPayload>,
  cancelling: () => boolean,
): Promise<TaskOutcome> {
  try {
    return answeredOutcome(handle.snapshot, await payload);
  } catch (error) {
    if (cancelling())
      return cancelledOutcome(handle.snapshot, handle.cancelAcknowledgement, 'The call was cancelled by the client');
    throw error;
  }
}
