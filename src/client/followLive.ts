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

/**
 * Runs `follow` until the task is seen terminal, then stops it (spec TS18): events arriving after that are dropped
 * (TS19, the follower's `signal` rule). A task already seen terminal is followed until the server ends the
 * subscription, so asking for the events of a finished task replays what its log retained.
 */
export async function* followLive(
  task: LiveTask,
  follow: (signal: AbortSignal) => AsyncGenerator<TaskEvent, void, undefined>,
): AsyncGenerator<TaskEvent, void, undefined> {
  const stop = new AbortController();
  if (!isTerminalStatus(task.status) && !task.settled) {
    const off = task.subscribe((snapshot) => {
      if (isTerminalStatus(snapshot.status)) stop.abort();
    });
    void task.settlement.catch(() => undefined).then(() => stop.abort());
    stop.signal.addEventListener('abort', off, { once: true });
  }
  try {
    yield* follow(stop.signal);
  } finally {
    stop.abort();
  }
}
