import type { TaskEvent } from './EventSourceFollower.js';
import type { TaskSnapshot } from './TaskSnapshot.js';
import { isTerminalStatus } from './TaskStatus.js';

/** What a handle tells its event follow: its status now, its status changes, and its settlement. */
export interface LiveTask {
  status: TaskSnapshot['status'];
  settled: boolean;
  subscribe(listener: (snapshot: TaskSnapshot) => void): () => void;
  settlement: Promise<unknown>;
}

/** The two stops of a follow: `signal` at once (the iteration was left, or the caller's signal aborted), `ending` once the task was seen terminal. */
export interface LiveStops {
  signal: AbortSignal;
  ending: AbortSignal;
}

/**
 * Runs `follow` until the task is seen terminal, then lets it read what the task emitted before its end and stop
 * (spec TS17, TS18; the follower's `ending` rule, bounded so a dead source cannot hang it): nothing from after the end
 * is yielded (TS19). A task already seen terminal is followed until the server ends the subscription, so asking for
 * the events of a finished task replays what its log retained.
 */
export async function* followLive(
  task: LiveTask,
  follow: (stops: LiveStops) => AsyncGenerator<TaskEvent, void, undefined>,
  outer?: AbortSignal,
): AsyncGenerator<TaskEvent, void, undefined> {
  const stop = new AbortController();
  // The caller's own stop (e.g. a Ctrl-C) ends the follow at once, like leaving the iteration.
  if (outer?.aborted) stop.abort();
  else outer?.addEventListener('abort', () => stop.abort(), { once: true, signal: stop.signal });
  const ending = new AbortController();
  if (!isTerminalStatus(task.status) && !task.settled) {
    const off = task.subscribe((snapshot) => {
      if (isTerminalStatus(snapshot.status)) ending.abort();
    });
    void task.settlement.catch(() => undefined).then(() => ending.abort());
    ending.signal.addEventListener('abort', off, { once: true });
    stop.signal.addEventListener('abort', off, { once: true });
  }
  try {
    yield* follow({ signal: stop.signal, ending: ending.signal });
  } finally {
    stop.abort();
  }
}
