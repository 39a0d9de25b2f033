import type Database from 'better-sqlite3';

import { StoreUnavailableError } from '../../engine/index.js';
import { diskFullError } from './diskFullError.js';
import type { WalSync } from './WalSync.js';

type Transaction<A extends unknown[]> = Database.Transaction<(...args: A) => unknown>;
type SharedTransaction = Transaction<[Pending[], Array<{ value: unknown } | { error: unknown }>]>;

interface Pending {
  op: () => unknown;
  /** Settled only once the commit is on disk (false: once committed, for writes a power loss may take back). */
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Writes of one transaction at most: bounds how long one commit holds the event loop. */
const MAX_BATCH = 1000;

/**
 * Group commit: the writes issued while the event loop works through one round of I/O run in one transaction, so
 * concurrent creations and transitions share one fsync. Each write of a shared transaction runs in its own savepoint
 * (a failing one is rolled back alone and rejected alone) and is resolved only once the transaction is durable.
 *
 * With a WalSync (the default for a file store), the transaction commits without an fsync and the writes settle once
 * the WAL file's flush that follows on the thread pool has finished: the event loop goes on meanwhile, and the
 * commits made during one flush share the next.
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

  /** The transaction functions of the connection in use, made once: better-sqlite3 builds each at some cost. */
  private made: { db: Database.Database; single: Transaction<[() => unknown]>; shared: SharedTransaction } | undefined;

  constructor(
    private readonly database: () => Database.Database,
    /** Flushes commits to disk off the event loop; without it, each commit is durable when it returns (or not needed). */
    private readonly sync?: WalSync,
    /** Told after each transaction that committed (the checkpointer's cue). */
    private readonly onCommit: () => void = () => {},
  ) {}

  /**
   * Runs `op` (synchronous SQLite writes) in the next shared transaction; settles once that transaction committed and
   * is on disk. `durable: false` settles once it committed (visible to every reader): for writes that only record
   * what happened (timeline entries), whose loss in a power cut costs no task. They reach the disk with the next
   * flush, and never ahead of an earlier write: the WAL is flushed in order.
   */
  run<T>(op: () => T, { durable = true }: { durable?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { op, durable, resolve: resolve as (value: unknown) => void, reject };
      if (!this.busyRound && this.queue.length === 0) {
        // Nothing waits before it: committing now keeps write order and costs the lone writer no loop turn.
        this.busyRound = true;
        setImmediate(() => {
          this.busyRound = false;
        });
        this.commit([pending]);
        return;
      }
      this.queue.push(pending);
      if (!this.scheduled) {
        this.scheduled = true;
        // After the current round of I/O callbacks: every request read in it gets to queue its write first.
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is queued now. */
  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0) this.commit(this.queue.splice(0, MAX_BATCH));
  }

  /** Commits what is queued now and waits until every commit is on disk (before the connection closes). */
  async drain(): Promise<void> {
    this.flush();
    await this.sync?.settled();
  }

  private wrappers(db: Database.Database) {
    if (this.made?.db === db) return this.made;
    // Nested: a savepoint of the shared transaction, so a failing write is rolled back alone.
    const savepoint = db.transaction((op: () => unknown) => op());
    const shared = db.transaction((batch: Pending[], outcomes: Array<{ value: unknown } | { error: unknown }>) => {
      for (const pending of batch) {
        try {
          outcomes.push({ value: savepoint(pending.op) });
        } catch (error) {
          outcomes.push({ error });
        }
      }
    });
    this.made = { db, single: db.transaction((op: () => unknown) => op()), shared };
    return this.made;
  }

  private commit(batch: Pending[]): void {
    const outcomes: Array<{ value: unknown } | { error: unknown }> = [];
    try {
      const { single, shared } = this.wrappers(this.database());
      // A lone write needs no savepoint: if it fails, the transaction holding only it rolls back, as the savepoint would.
      if (batch.length === 1) outcomes.push({ value: single.immediate((batch[0] as Pending).op) });
      else shared.immediate(batch, outcomes);
    } catch (error) {
      // Nothing of the batch committed (a busy file, a closed store, a failed fsync): every write fails as a whole,
      // so a retried write runs again on a state without it.
      const failure = diskFullError(error);
      for (const pending of batch) pending.reject(failure);
      return;
    }
    this.onCommit();
    const settle = (which: (pending: Pending) => boolean) =>
      batch.forEach((pending, i) => {
        if (!which(pending)) return;
        const outcome = outcomes[i] as { value: unknown } | { error: unknown };
        if ('error' in outcome) pending.reject(diskFullError(outcome.error));
        else pending.resolve(outcome.value);
      });
    if (!this.sync) return settle(() => true);
    settle((pending) => !pending.durable);
    if (!batch.some((pending) => pending.durable)) return;
    this.sync.afterCommit((error) => {
      if (!error) return settle((pending) => pending.durable);
      // Committed but not known to be on disk: reported as a store failure, never as a success.
      const failure = new StoreUnavailableError(`could not flush the SQLite WAL to disk: ${error.message}`, {
        cause: error,
      });
      for (const pending of batch) if (pending.durable) pending.reject(failure);
    });
  }
}
