import type { TaskEventBus } from './TaskEventBus.js';
import type { TaskRecord } from './TaskRecord.js';

/** A keyset position in an owner's list: newest first, ties broken by task id. */
export interface ListPosition {
  createdAt: number;
  taskId: string;
}

export type InsertResult =
  | { inserted: true }
  | { inserted: false; reason: 'duplicate_id' }
  | { inserted: false; reason: 'duplicate_key'; existing: TaskRecord };

/**
 * Persistence for task records. Implementations must make `insert` and `replace` durable before resolving,
 * and `replace` an atomic compare-and-set on `version`. Every store passes the shared contract suite.
 */
export interface TaskStore {
  readonly kind: string;
  /** Cross-process when the backend can (Redis pub/sub, PostgreSQL LISTEN/NOTIFY); in-process otherwise. */
  readonly events: TaskEventBus;
  init(): Promise<void>;
  close(): Promise<void>;
  insert(record: TaskRecord): Promise<InsertResult>;
  get(taskId: string): Promise<TaskRecord | undefined>;
  getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord | undefined>;
  /** Writes `next` only if the stored version is `expectedVersion`. `next.version` is `expectedVersion + 1`. */
  replace(next: TaskRecord, expectedVersion: number): Promise<boolean>;
  delete(taskId: string): Promise<boolean>;
  /** One page of an owner's unexpired tasks, newest first, strictly after `after`. */
  list(owner: string, options: { after?: ListPosition; limit: number; now: number }): Promise<TaskRecord[]>;
  /** Non-terminal tasks of an owner (for the concurrency limit). */
  countActive(owner: string): Promise<number>;
  /** Removes up to `limit` expired tasks and returns them; cost follows the number expired. */
  sweepExpired(now: number, limit: number): Promise<TaskRecord[]>;
  /** Non-terminal tasks whose runner's lease ended before `now`. */
  findStale(now: number, limit: number): Promise<TaskRecord[]>;
  /** Extends the lease of every non-terminal task held by `runner`. */
  renewLeases(runner: string, leaseUntil: number): Promise<void>;
  /** A random secret shared by every process using this store (signs list cursors). */
  getSecret(): Promise<Uint8Array>;
}
