/** Writes of one statement at most. */
const MAX_BATCH = 500;

/**
 * Group commit for PostgreSQL: writes issued while one batch is on its way wait for it, then go together as one
 * statement (one round trip, one transaction, one WAL flush); each is settled only once that statement committed.
 * Reads use it the same way (one statement for the reads of a round). Items are told apart by identity: each call
 * passes a fresh object.
 * A batch that fails as a whole (a deadlock with another process's batch, a bad row) runs again one write at a time,
 * so every write gets exactly the outcome or error it would have had alone.
 */
export class PgBatch<I extends object, O> {
  private queue: I[] = [];
  private readonly waiters = new Map<I, { resolve: (value: O) => void; reject: (error: unknown) => void }>();
  private busy = false;

  constructor(
    private readonly runMany: (items: I[]) => Promise<O[]>,
    private readonly runOne: (item: I) => Promise<O>,
    /** Items with the same key never share a batch (two compare-and-sets of one row must see each other). */
    private readonly key: (item: I) => string,
  ) {}

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiters.set(item, { resolve, reject });
      this.queue.push(item);
      if (!this.busy) {
        this.busy = true;
        // After the current round of I/O callbacks, so the writes it issues go together.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch: I[] = [];
      const keys = new Set<string>();
      const later: I[] = [];
      for (const item of this.queue) {
        const key = this.key(item);
        if (batch.length < MAX_BATCH && !keys.has(key)) {
          keys.add(key);
          batch.push(item);
        } else later.push(item);
      }
      this.queue = later;
      await this.commit(batch);
    }
    this.busy = false;
  }

  private async commit(batch: I[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const outcomes = await this.runMany(batch);
        batch.forEach((item, i) => this.settle(item, { value: outcomes[i] as O }));
        return;
      } catch {
        // One at a time below: each write gets its own outcome or error.
      }
    }
    await Promise.all(
      batch.map((item) =>
        this.runOne(item).then(
          (value) => this.settle(item, { value }),
          (error: unknown) => this.settle(item, { error }),
        ),
      ),
    );
  }

  private settle(item: I, outcome: { value: O } | { error: unknown }): void {
    const waiter = this.waiters.get(item);
    this.waiters.delete(item);
    if ('error' in outcome) waiter?.reject(outcome.error);
    else waiter?.resolve(outcome.value);
  }
}
