import type Database from 'better-sqlite3';

interface Pending {
  op: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Writes of one transaction at most: bounds how long one commit holds the event loop. */
const MAX_BATCH = 1000;

/**
 * Group commit: the writes issued while the event loop works through one round of I/O run in one transaction, so
 * concurrent creations and transitions share one fsync (the expensive part with `synchronous=FULL`). Each write runs
 * in its own savepoint (a failing one is rolled back alone and rejected alone) and is resolved only once the shared
 * transaction has committed, i.e. only once it is durable.
 *
 * Adaptive: the first write of a round commits at once, so a lone sequential writer (one task's steps) never waits
 * for the loop to turn; only writes that arrive later in the same round, i.e. real concurrency, are held for the
 * shared commit at its end.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  /** A write already committed in the current round of the event loop. */
  private busyRound = false;

  constructor(private readonly database: () => Database.Database) {}

  /** Runs `op` (synchronous SQLite writes) in the next shared transaction; settles once that transaction committed. */
  run<T>(op: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (!this.busyRound && this.queue.length === 0) {
        // Nothing waits before it: committing now keeps write order and costs the lone writer no loop turn.
        this.busyRound = true;
        setImmediate(() => {
          this.busyRound = false;
        });
        this.commit([{ op, resolve: resolve as (value: unknown) => void, reject }]);
        return;
      }
      this.queue.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the current round of I/O callbacks: every request read in it gets to queue its write first.
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is queued now (before the connection closes). */
  flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) this.commit(this.queue.splice(0, MAX_BATCH));
  }

  private commit(batch: Pending[]): void {
    const outcomes: Array<{ value: unknown } | { error: unknown }> = [];
    try {
      const db = this.database();
      db.transaction(() => {
        for (const pending of batch) {
          try {
            // Nested: a savepoint of the shared transaction.
            outcomes.push({ value: db.transaction(pending.op)() });
          } catch (error) {
            outcomes.push({ error });
          }
        }
      }).immediate();
    } catch (error) {
      // Nothing of the batch committed (a busy file, a closed store, a failed fsync): every write fails as a whole,
      // so a retried write runs again on a state without it.
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i] as { value: unknown } | { error: unknown };
      if ('error' in outcome) pending.reject(outcome.error);
      else pending.resolve(outcome.value);
    });
  }
}
