import type Database from 'better-sqlite3';

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
  private readonly entries = new Map<string, { record: TaskRecord; bytes: number }>();
  private bytes = 0;
  private dataVersion: Database.Statement | undefined;
  private lastDataVersion = -1;

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
  ) {}

  /** Starts following the file through `db` (the store's connection). */
  start(db: Database.Database): void {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.lastDataVersion = this.dataVersion.get() as number;
    this.clear();
  }

  /** The cached record of `taskId`, unless another connection committed since it was cached. */
  get(taskId: string): TaskRecord | undefined {
    if (this.maxEntries <= 0 || !this.dataVersion) return undefined;
    const version = this.dataVersion.get() as number;
    if (version !== this.lastDataVersion) {
      this.lastDataVersion = version;
      this.clear();
      return undefined;
    }
    const entry = this.entries.get(taskId);
    if (entry === undefined) return undefined;
    // Most recently used last: the map's order is the eviction order.
    this.entries.delete(taskId);
    this.entries.set(taskId, entry);
    return entry.record;
  }

  /** Keeps `record`, just decoded from `bytes` of stored JSON, frozen in place; returns it. */
  remember(record: TaskRecord, bytes: number): TaskRecord {
    if (this.maxEntries <= 0 || bytes > this.maxBytes) return record;
    this.forget(record.taskId);
    this.entries.set(record.taskId, { record: deepFreeze(record), bytes });
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes)
      this.forget(this.entries.keys().next().value as string);
    return record;
  }

  /** Drops `taskId` (a write of this connection touches it). */
  forget(taskId: string): void {
    const entry = this.entries.get(taskId);
    if (!entry) return;
    this.entries.delete(taskId);
    this.bytes -= entry.bytes;
  }

  /** Drops the entries of tasks leased by `runner` (their lease column changes in place). */
  forgetRunner(runner: string): void {
    for (const [taskId, entry] of this.entries) if (entry.record.runner === runner) this.forget(taskId);
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  get size(): number {
    return this.entries.size;
  }
}
