import { randomBytes } from 'node:crypto';

import {
  type EventStreamLog,
  frozenCopy,
  type InsertResult,
  isTerminal,
  type ListPosition,
  LocalEventBus,
  type OwnerLimits,
  type StepJournalStore,
  type TaskBrowseStore,
  type TaskEventLog,
  type TaskRecord,
  type TaskStore,
  type TaskTimelineStore,
  type WebhookOutboxStore,
} from '../../engine/index.js';
import { MemoryBrowse } from './MemoryBrowse.js';
import { MemoryEventStreams } from './MemoryEventStreams.js';
import { MemoryStepJournalStore } from './MemoryStepJournalStore.js';
import { MemoryTimeline } from './MemoryTimeline.js';
import { MemoryTaskEventLog } from './MemoryTaskEventLog.js';
import { MemoryWebhookOutbox } from './MemoryWebhookOutbox.js';
import { MinHeap } from './MinHeap.js';
import { TaskPositions } from './TaskPositions.js';

/** A stored task: the indexed fields as values, the whole record deeply frozen. */
interface Stored {
  record: TaskRecord;
  owner: string;
  active: boolean;
  expiresAt: number | null;
  version: number;
  runner: string | undefined;
  leaseUntil: number | undefined;
  idempotencyKey: string | undefined;
  createdAt: number;
  /** UTF-8 JSON bytes of the record (see `recordBytes`). */
  bytes: number;
  /** The outcome was delivered to the requestor (`markFetched`). */
  fetched: boolean;
}

/**
 * Keeps tasks in process memory: for tests, demos and single-process servers that need no durability.
 * Records are copied once on write and frozen, so a read hands out the stored record itself, and callers can never
 * change stored state behind the store's back (the engine edits copies).
 */
export class MemoryStore implements TaskStore {
  readonly kind = 'memory';
  readonly events = new LocalEventBus();
  readonly journal: StepJournalStore = new MemoryStepJournalStore();
  readonly timeline: TaskTimelineStore = new MemoryTimeline();
  readonly eventLog: TaskEventLog = new MemoryTaskEventLog();
  readonly eventStreams: EventStreamLog = new MemoryEventStreams();
  readonly webhooks: WebhookOutboxStore = new MemoryWebhookOutbox();
  readonly browse: TaskBrowseStore = new MemoryBrowse({
    positions: () => this.all,
    positionsOf: (owner) => this.byOwner.get(owner),
    read: (taskId) => this.read(taskId),
  });
  private readonly tasks = new Map<string, Stored>();
  /** Every task's position, newest first (the operators' view across owners). */
  private readonly all = new TaskPositions();
  private readonly byKey = new Map<string, string>();
  /** Per owner, positions sorted newest first. */
  private readonly byOwner = new Map<string, TaskPositions>();
  private readonly activeByOwner = new Map<string, number>();
  /** Fetched tasks per owner and of every owner, each in the order they were fetched (a Set keeps insertion order). */
  private readonly fetchedByOwner = new Map<string, Set<string>>();
  private readonly fetchedAll = new Set<string>();
  private readonly bytesByOwner = new Map<string, number>();
  private totalBytes = 0;
  private readonly leased = new Set<string>();
  private readonly expiry = new MinHeap<string>();
  private readonly secret = randomBytes(32);

  async init(): Promise<void> {}

  async close(): Promise<void> {
    await this.events.close();
  }

  async insert(record: TaskRecord, limits: OwnerLimits = {}): Promise<InsertResult> {
    if (this.tasks.has(record.taskId)) return { inserted: false, reason: 'duplicate_id' };
    if (record.idempotencyKey !== undefined) {
      const holder = this.byKey.get(keyOf(record.owner, record.idempotencyKey));
      const existing = holder === undefined ? undefined : this.read(holder);
      if (existing) return { inserted: false, reason: 'duplicate_key', existing };
    }
    // Nothing awaits between these checks and the write, so they are atomic with it.
    if (limits.maxActive !== undefined && (this.activeByOwner.get(record.owner) ?? 0) >= limits.maxActive)
      return { inserted: false, reason: 'limit', limit: 'active' };
    if (limits.maxStored !== undefined && (this.byOwner.get(record.owner)?.size ?? 0) >= limits.maxStored)
      return { inserted: false, reason: 'limit', limit: 'stored' };
    if (limits.maxStoredBytes !== undefined && (this.bytesByOwner.get(record.owner) ?? 0) >= limits.maxStoredBytes)
      return { inserted: false, reason: 'limit', limit: 'stored_bytes' };
    this.write(record);
    const positions = this.byOwner.get(record.owner) ?? new TaskPositions();
    positions.add(record);
    this.byOwner.set(record.owner, positions);
    this.all.add(record);
    if (record.idempotencyKey !== undefined) this.byKey.set(keyOf(record.owner, record.idempotencyKey), record.taskId);
    return { inserted: true };
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    return this.read(taskId);
  }

  async getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord | undefined> {
    const taskId = this.byKey.get(keyOf(owner, key));
    return taskId === undefined ? undefined : this.read(taskId);
  }

  async replace(next: TaskRecord, expectedVersion: number): Promise<boolean> {
    const current = this.tasks.get(next.taskId);
    if (!current || current.version !== expectedVersion) return false;
    // A lease renewed since the writer read the task is kept when the runner stays the same.
    const renewed =
      next.runner === current.runner &&
      next.leaseUntil !== undefined &&
      current.leaseUntil !== undefined &&
      current.leaseUntil > next.leaseUntil;
    this.write(renewed ? { ...next, leaseUntil: current.leaseUntil } : next);
    return true;
  }

  async delete(taskId: string): Promise<boolean> {
    const stored = this.tasks.get(taskId);
    if (!stored) return false;
    this.tasks.delete(taskId);
    this.leased.delete(taskId);
    if (stored.active) this.countActiveChange(stored.owner, -1);
    this.countBytes(stored.owner, -stored.bytes);
    if (stored.fetched) {
      this.fetchedAll.delete(taskId);
      const fetched = this.fetchedByOwner.get(stored.owner);
      fetched?.delete(taskId);
      if (fetched?.size === 0) this.fetchedByOwner.delete(stored.owner);
    }
    if (stored.idempotencyKey !== undefined) this.byKey.delete(keyOf(stored.owner, stored.idempotencyKey));
    const position = { createdAt: stored.createdAt, taskId };
    const positions = this.byOwner.get(stored.owner);
    positions?.remove(position);
    if (positions?.size === 0) this.byOwner.delete(stored.owner);
    this.all.remove(position);
    return true;
  }

  async list(owner: string, options: { after?: ListPosition; limit: number; now: number }): Promise<TaskRecord[]> {
    const page: TaskRecord[] = [];
    for (const { taskId } of this.byOwner.get(owner)?.after(options.after) ?? []) {
      if (page.length >= options.limit) break;
      const stored = this.tasks.get(taskId);
      if (stored && (stored.expiresAt === null || stored.expiresAt > options.now))
        page.push(this.read(taskId) as TaskRecord);
    }
    return page;
  }

  async countActive(owner: string): Promise<number> {
    return this.activeByOwner.get(owner) ?? 0;
  }

  async sweepExpired(now: number, limit: number): Promise<TaskRecord[]> {
    const removed: TaskRecord[] = [];
    while (removed.length < limit) {
      const key = this.expiry.peekKey();
      if (key === undefined || key > now) break;
      const entry = this.expiry.pop() as { key: number; value: string };
      const stored = this.tasks.get(entry.value);
      // Heap entries are not removed on update; skip the ones that no longer match the record.
      if (!stored || stored.expiresAt !== entry.key) continue;
      removed.push(this.read(entry.value) as TaskRecord);
      await this.delete(entry.value);
    }
    return removed;
  }

  async findStale(now: number, limit: number): Promise<TaskRecord[]> {
    const stale: TaskRecord[] = [];
    for (const taskId of this.leased) {
      const stored = this.tasks.get(taskId);
      if (stored?.leaseUntil !== undefined && stored.leaseUntil < now) stale.push(this.read(taskId) as TaskRecord);
      if (stale.length >= limit) break;
    }
    return stale;
  }

  async renewLeases(runner: string, leaseUntil: number): Promise<void> {
    for (const taskId of this.leased) {
      const stored = this.tasks.get(taskId);
      if (stored?.runner === runner) stored.leaseUntil = leaseUntil;
    }
  }

  async markFetched(taskId: string): Promise<void> {
    const stored = this.tasks.get(taskId);
    if (!stored || stored.active || stored.fetched) return;
    stored.fetched = true;
    this.fetchedAll.add(taskId);
    const fetched = this.fetchedByOwner.get(stored.owner) ?? new Set<string>();
    fetched.add(taskId);
    this.fetchedByOwner.set(stored.owner, fetched);
  }

  async evictFetched(owner: string | undefined, limit: number): Promise<string[]> {
    const candidates = owner === undefined ? this.fetchedAll : (this.fetchedByOwner.get(owner) ?? new Set<string>());
    const evicted: string[] = [];
    for (const taskId of candidates) {
      if (evicted.length >= limit) break;
      evicted.push(taskId);
    }
    for (const taskId of evicted) await this.delete(taskId);
    return evicted;
  }

  async storedBytes(): Promise<number> {
    return this.totalBytes;
  }

  async storedBytesOf(owner: string): Promise<number> {
    return this.bytesByOwner.get(owner) ?? 0;
  }

  async getSecret(): Promise<Uint8Array> {
    return this.secret;
  }

  private read(taskId: string): TaskRecord | undefined {
    const stored = this.tasks.get(taskId);
    if (!stored) return undefined;
    // Leases are renewed in place without rewriting the record: only then is a (shallow) copy needed.
    if (stored.leaseUntil === stored.record.leaseUntil) return stored.record;
    const { leaseUntil: _stale, ...rest } = stored.record;
    return Object.freeze(
      stored.leaseUntil === undefined ? rest : { ...rest, leaseUntil: stored.leaseUntil },
    ) as TaskRecord;
  }

  private write(record: TaskRecord): void {
    const previous = this.tasks.get(record.taskId);
    const active = !isTerminal(record.status);
    // Members the transition kept from the stored record are frozen already and shared; the rest is copied.
    const frozen = frozenCopy(record, previous?.record);
    const bytes = recordBytes(frozen);
    this.tasks.set(record.taskId, {
      record: frozen,
      owner: record.owner,
      active,
      expiresAt: record.expiresAt,
      version: record.version,
      runner: record.runner,
      leaseUntil: record.leaseUntil,
      idempotencyKey: record.idempotencyKey,
      createdAt: record.createdAt,
      bytes,
      fetched: previous?.fetched ?? false,
    });
    this.countBytes(record.owner, bytes - (previous?.bytes ?? 0));
    if (active !== (previous?.active ?? false)) this.countActiveChange(record.owner, active ? 1 : -1);
    if (active && record.leaseUntil !== undefined) this.leased.add(record.taskId);
    else this.leased.delete(record.taskId);
    if (record.expiresAt !== null && record.expiresAt !== previous?.expiresAt)
      this.expiry.push(record.expiresAt, record.taskId);
  }

  private countBytes(owner: string, delta: number): void {
    this.totalBytes += delta;
    const bytes = (this.bytesByOwner.get(owner) ?? 0) + delta;
    if (bytes === 0) this.bytesByOwner.delete(owner);
    else this.bytesByOwner.set(owner, bytes);
  }

  private countActiveChange(owner: string, delta: number): void {
    const count = (this.activeByOwner.get(owner) ?? 0) + delta;
    if (count === 0) this.activeByOwner.delete(owner);
    else this.activeByOwner.set(owner, count);
  }
}

/** The bytes of each frozen request and outcome, measured once: later writes of the task share those members. */
const memberBytes = new WeakMap<object, number>();

function bytesOf(value: object): number {
  let bytes = memberBytes.get(value);
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    memberBytes.set(value, bytes);
  }
  return bytes;
}

/** A record's UTF-8 JSON bytes, as the other stores count them, without serializing its request and outcome again. */
function recordBytes(record: TaskRecord): number {
  const { request, outcome, ...rest } = record;
  // 11: a member's `,"request":` (or `,"outcome":`) around its value.
  return (
    Buffer.byteLength(JSON.stringify(rest), 'utf8') + bytesOf(request) + 11 + (outcome ? bytesOf(outcome) + 11 : 0)
  );
}

function keyOf(owner: string, key: string): string {
  return `${owner.length}:${owner}:${key}`;
}
