import type { StepJournalStore } from './StepJournalStore.js';
import type { WebhookOutboxStore } from './WebhookOutboxStore.js';
import type { TaskBrowseStore } from './TaskBrowseStore.js';
import type { TaskChange } from '../record/TaskChange.js';
import type { TaskEventBus } from './TaskEventBus.js';
import type { TaskEventLog } from './TaskEventLog.js';
import type { EventStreamLog } from './EventStreamLog.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import type { TaskTimelineStore, TimelineEntry } from '../record/TaskTimeline.js';

/** A keyset position in an owner's list: newest first, ties broken by task id. */
export interface ListPosition {
  createdAt: number;
  taskId: string;
}

export type InsertResult =
  | { inserted: true }
  | { inserted: false; reason: 'duplicate_id' }
  | { inserted: false; reason: 'duplicate_key'; existing: TaskRecord }
  | { inserted: false; reason: 'limit'; limit: OwnerLimitKind };

/**
 * Which per-owner cap refused an insert: non-terminal tasks, every stored task (finished ones included), or the bytes
 * of the owner's stored records.
 */
export type OwnerLimitKind = 'active' | 'stored' | 'stored_bytes';

/**
 * Per-owner caps an insert enforces atomically with itself, so processes sharing the store cannot exceed them by
 * racing. A stored task counts until it is deleted or swept, so an expired task not swept yet still counts.
 */
export interface OwnerLimits {
  /** Non-terminal tasks of the owner, the new one included, at most this many. */
  maxActive?: number;
  /** Stored tasks of the owner (any status), the new one included, at most this many. */
  maxStored?: number;
  /**
   * Bytes of the owner's stored records (their UTF-8 JSON as the store keeps it): an insert is refused while the
   * owner's total is at or over this (checked at admission; results stored later count from then on).
   */
  maxStoredBytes?: number;
}

/** Entries for a task's timeline, which keeps its first and newest `maxEntries` entries. */
export interface TimelineAppend {
  entries: TimelineEntry[];
  maxEntries: number;
}

/** What a store with `insertsAlong` does with a successful `insert`, in the same step. */
export interface InsertAlong {
  /** Appended to the new task's timeline. */
  timeline?: TimelineAppend;
}

/** What a store with `replacesAlong` does with a successful `replace`, in the same step. */
export interface ReplaceAlong {
  /** Appended to the task's timeline. */
  timeline?: TimelineAppend;
  /** Published on the store's event bus once the write is stored. */
  change: TaskChange;
  /**
   * The record at `expectedVersion` as the writer read it (its lease perhaps renewed in place since): a store may
   * write only the indexed fields that differ from it.
   */
  previous?: TaskRecord;
}

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
  /**
   * Stores a new (non-terminal) task unless its id or idempotency key is taken or an owner cap is reached. A store
   * with `insertsAlong` also does what `along` says, in the same step, when it stores the task.
   */
  insert(record: TaskRecord, limits?: OwnerLimits, along?: InsertAlong): Promise<InsertResult>;
  /** The store appends a new task's first timeline entries itself, with the insert (`insert`'s `along`). */
  readonly insertsAlong?: boolean;
  get(taskId: string): Promise<TaskRecord | undefined>;
  getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord | undefined>;
  /**
   * Writes `next` only if the stored version is `expectedVersion`. `next.version` is `expectedVersion + 1`. A store
   * with `replacesAlong` also does what `along` says, in the same step (one script, one transaction), when it writes.
   */
  replace(next: TaskRecord, expectedVersion: number, along?: ReplaceAlong): Promise<boolean>;
  /**
   * The store appends a write's timeline entries and publishes its change itself, with the write (`replace`'s
   * `along`): a round trip or two fewer per write where each costs one.
   */
  readonly replacesAlong?: boolean;
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
  /**
   * Marks a terminal task's outcome as delivered to its requestor at `at` (the first mark stays): from then on the
   * task may be evicted by `evictFetched`. Not a write of the record (no version, no event); a missing or
   * non-terminal task is left alone.
   */
  markFetched?(taskId: string, at: number): Promise<void>;
  /**
   * Deletes up to `limit` tasks whose outcome was delivered (`markFetched`), the earliest delivered first: the owner's,
   * or any owner's when `owner` is undefined. Returns the deleted tasks' ids.
   */
  evictFetched?(owner: string | undefined, limit: number): Promise<string[]>;
  /** Bytes of every stored record (as `OwnerLimits.maxStoredBytes` counts them), all owners together. */
  storedBytes?(): Promise<number>;
  /** Bytes of the owner's stored records, as `OwnerLimits.maxStoredBytes` counts them (the console's owners view). */
  storedBytesOf?(owner: string): Promise<number>;
  /** A random secret shared by every process using this store (signs list cursors). */
  getSecret(): Promise<Uint8Array>;
  /** Step journal and durable timers for workflow tools, when the store has them (opened by the engine). */
  readonly journal?: StepJournalStore;
  /** Webhook subscriptions and their delivery outbox, when the store has them (EVENTS-SPEC §7). */
  readonly webhooks?: WebhookOutboxStore;
  /** Each task's transitions, when the store keeps them (opened by the engine). */
  readonly timeline?: TaskTimelineStore;
  /** Each task's emitted events, when the store keeps them (opened by the engine). */
  readonly eventLog?: TaskEventLog;
  /** The durable logs of untasked event types, when the store keeps them (opened by the events front). */
  readonly eventStreams?: EventStreamLog;
  /** Reads across owners for operators, when the store has them. */
  readonly browse?: TaskBrowseStore;
}
