/**
 * Where a handle is in its life: made `idle`, followed from the first `outcome()` / `updates()` / `cancel()` (at
 * once unless `follow: false`), and ended `settled`, or `detached` when the host stopped following it. Whether the
 * server confirmed a SEP-1686 task, and whether a cancel was asked for (`CancelPhase`), are facts beside the phase.
 */
export type HandlePhase =
  /** Nobody follows the call yet. */
  | 'idle'
  /** SEP-1686: waiting for `notifications/tasks/created` or the original response, whichever comes first. */
  | 'confirming'
  /** A plain call: waiting for its response. */
  | 'calling'
  /** Following the task with `tasks/get`, answering input as it is asked for. */
  | 'polling'
  /** The host stopped following; nothing was cancelled and a stored handle stays stored. */
  | 'detached'
  /** The outcome, or why it cannot be known, was delivered. Final. */
  | 'settled';

/** What the handle follows: a plain call, a task, or a SEP-1686 task the server has not confirmed yet. */
export type FollowKind = 'call' | 'task' | 'unconfirmed';

export type HandleEvent =
  | { type: 'follow'; kind: FollowKind }
  /** The task exists as far as the handle can tell: confirmed, or only polling can say (a cancel, a failed call). */
  | { type: 'confirmed' }
  | { type: 'detach' }
  | { type: 'settle' };

/** What a cancel has reached; snapshots carry `cancelRequested` from `requested` until the final word. */
export type CancelPhase = 'none' | 'requested' | 'sent';

const FOLLOWING: Record<FollowKind, HandlePhase> = { call: 'calling', task: 'polling', unconfirmed: 'confirming' };

/**
 * The next phase: pure, so every path is tested without a server. An event that means nothing in a phase leaves it
 * (a second `follow`, a late confirmation, following a detached handle); `settled` is final, and only a settlement
 * leaves `detached` (closing the client rejects an outcome the host may still await).
 */
export function nextPhase(phase: HandlePhase, event: HandleEvent): HandlePhase {
  if (phase === 'settled') return phase;
  switch (event.type) {
    case 'settle':
      return 'settled';
    case 'detach':
      return 'detached';
    case 'follow':
      return phase === 'idle' ? FOLLOWING[event.kind] : phase;
    case 'confirmed':
      return phase === 'confirming' ? 'polling' : phase;
  }
}
