import { sameVisibleState, type TaskProgress, type TaskSnapshot } from './TaskSnapshot.js';
import { isTerminalStatus } from './TaskStatus.js';

/**
 * A handle's latest snapshot and the listeners that see it change. Only visible changes are published, nothing
 * follows a terminal snapshot (spec R17), and `cancelRequested` is the handle's own word, never the server's.
 */
export class SnapshotFeed {
  private latest: TaskSnapshot;
  private readonly listeners = new Set<(snapshot: TaskSnapshot) => void>();

  constructor(initial: TaskSnapshot) {
    this.latest = initial;
  }

  get snapshot(): TaskSnapshot {
    return this.latest;
  }

  subscribe(listener: (snapshot: TaskSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Takes a new observation; progress is carried over until the end, `cancelRequested` set as the handle says. */
  publish(snapshot: TaskSnapshot, cancelRequested: boolean): void {
    // Once terminal, a task never changes again (spec R17): nothing may follow the final word.
    if (isTerminalStatus(this.latest.status) && !isTerminalStatus(snapshot.status)) return;
    const { cancelRequested: _local, ...server } = snapshot;
    const terminal = isTerminalStatus(snapshot.status);
    const progress = terminal ? server.progress : laterProgress(this.latest.progress, server.progress);
    const next: TaskSnapshot = {
      ...server,
      ...(progress !== undefined && { progress }),
      ...(cancelRequested && !terminal && { cancelRequested: true }),
    };
    const visible = !sameVisibleState(this.latest, next);
    this.latest = next;
    if (!visible) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // A listener's failure must not stop the task being followed.
      }
    }
  }

  /** The current snapshot, then each change, ending after the terminal one or once `ended` settles. */
  async *updates(ended: Promise<unknown>, isOver: () => boolean): AsyncGenerator<TaskSnapshot, void, undefined> {
    const queue: TaskSnapshot[] = [this.latest];
    let signal: (() => void) | undefined;
    const off = this.subscribe((snapshot) => {
      queue.push(snapshot);
      signal?.();
    });
    const done = ended.then(
      () => undefined,
      () => undefined,
    );
    try {
      for (;;) {
        while (queue.length > 0) {
          const snapshot = queue.shift() as TaskSnapshot;
          yield snapshot;
          if (isTerminalStatus(snapshot.status)) return;
        }
        if (isOver()) return;
        await new Promise<void>((resolve) => {
          signal = resolve;
          void done.then(resolve);
        });
        signal = undefined;
      }
    } finally {
      off();
    }
  }
}

/**
 * The progress to show while the task runs: the latest, unless it goes back. Progress only grows (MCP progress), but a
 * `tasks/get` read can be older than a `notifications/progress` already seen (the store is written at most every
 * 250 ms), so a lower value is an older report, not news.
 */
function laterProgress(shown: TaskProgress | undefined, next: TaskProgress | undefined): TaskProgress | undefined {
  if (next === undefined) return shown;
  if (shown !== undefined && next.progress < shown.progress) return shown;
  return next;
}
