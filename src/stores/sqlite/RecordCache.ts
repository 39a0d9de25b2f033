import type Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';

import { deepFreeze, type TaskRecord } from '../../engine/index.js';

/**
 * The decoded records this process read or wrote last, so a `get` of a task read again (a poll, the engine's
 * read-modify-write) costs a map lookup instead of a query and a JSON parse. Always as fresh as the file: every write
 * of this connection drops the entries it touches inside its transaction, and a commit by any other connection
 * (another process sharing the file) moves `PRAGMA data_version`, which is read before each lookup and empties the
 * cache. Bounded: past `maxEntries` or `maxBytes` (of stored JSON) the least recently used entries go. Entries are
 * frozen, like the memory store's records, since every reader shares them.
 */
export class RecordCache {
  /**
   * An LRU cache, not a Map refreshed by delete-and-set and trimmed from its front: iterating past the slots of
   * deleted entries made each eviction cost time in proportion to the cache's size (about 55 µs at 100,000 entries).
   */
  private readonly entries: LRUCache<string, TaskRecord> | undefined;
  private dataVersion: Database.Statement | undefined;
  private lastDataVersion = -1;

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
  ) {
    // A record larger than the whole budget is not kept (maxEntrySize), as before.
    if (maxEntries > 0 && maxBytes > 0)
      this.entries = new LRUCache<string, TaskRecord>({ max: maxEntries, maxSize: maxBytes, maxEntrySize: maxBytes });
  }

  /** Starts following the file through `db` (the store's connection). */
  start(db: Database.Database): void {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.lastDataVersion = this.dataVersion.get() as number;
    this.clear();
  }

  /** The cached record of `taskId`, unless another connection committed since it was cached. */
  get(taskId: string): TaskRecord | undefined {
    if (!this.entries || !this.dataVersion) return undefined;
    // A task not cached is read from the file anyway: the version check (a read transaction, two lock syscalls) would
    // buy nothing. Another connection's commit is still seen by the next lookup of a cached task, which empties the
    // cache then; the record read now is fresh, so losing it there costs one more read at most.
    if (!this.entries.has(taskId)) return undefined;
    const version = this.dataVersion.get() as number;
    if (version !== this.lastDataVersion) {
      this.lastDataVersion = version;
      this.clear();
      return undefined;
    }
    return this.entries.get(taskId);
  }

  /** Keeps `record`, just decoded from `bytes` of stored JSON, frozen in place; returns it. */
  remember(record: TaskRecord, bytes: number): TaskRecord {
    if (!this.entries || bytes > this.maxBytes) return record;
    this.entries.set(record.taskId, deepFreeze(record), { size: Math.max(1, bytes) });
    return record;
  }

  /** Drops `taskId` (a write of this connection touches it). */
  forget(taskId: string): void {
    this.entries?.delete(taskId);
  }

  /** Drops the entries of tasks leased by `runner` (their lease column changes in place). */
  forgetRunner(runner: string): void {
    if (!this.entries) return;
    const leased = [...this.entries.entries()].filter(([, record]) => record.runner === runner);
    for (const [taskId] of leased) this.entries.delete(taskId);
  }

  clear(): void {
    this.entries?.clear();
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }
}
