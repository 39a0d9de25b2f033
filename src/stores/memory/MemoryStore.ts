import { randomBytes } from 'node:crypto';

import {
  LocalEventBus,
  isTerminal,
  type InsertResult,
  type ListPosition,
  type TaskRecord,
  type TaskStore,
} from '../../engine/index.js';
import { MinHeap } from './MinHeap.js';

/** Position order: newest first, ties by task id descending. Negative when `a` sorts before `b`. */
function compareDesc(a: ListPosition, b: ListPosition): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.taskId < b.taskId ? 1 : a.taskId > b.taskId ? -1 : 0;
}

/**
 * Keeps tasks in process memory: for tests, demos and single-process servers that need no durability.
 * Records are copied in and out, so callers can never change stored state behind the store's back.
 */
export class MemoryStore implements TaskStore {
  readonly kind = 'memory';
  readonly events = new LocalEventBus();
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly byKey = new Map<string, string>();
  /** Per owner, positions sorted newest first. */
  private readonly byOwner = new Map<string, ListPosition[]>();
  private readonly active = new Set<string>();
  private readonly expiry = new MinHeap<string>();
  private readonly secret = randomBytes(32);

  async init(): Promise<void> {}

  async close(): Promise<void> {
    await this.events.close();
  }

  async insert(record: TaskRecord): Promise<InsertResult> {
    if (this.tasks.has(record.taskId)) return { inserted: false, reason: 'duplicate_id' };
    if (record.idempotencyKey !== undefined) {
      const holder = this.byKey.get(keyOf(record.owner, record.idempotencyKey));
      const existing = holder === undefined ? undefined : this.tasks.get(holder);
      if (existing) return { inserted: false, reason: 'duplicate_key', existing: structuredClone(existing) };
    }
    this.write(structuredClone(record));
    const positions = this.byOwner.get(record.owner) ?? [];
    positions.splice(this.insertionIndex(positions, record), 0, { createdAt: record.createdAt, taskId: record.taskId });
    this.byOwner.set(record.owner, positions);
    if (record.idempotencyKey !== undefined) this.byKey.set(keyOf(record.owner, record.idempotencyKey), record.taskId);
    return { inserted: true };
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const record = this.tasks.get(taskId);
    return record && structuredClone(record);
  }

  async getByIdempotencyKey(owner: string, key: string): Promise<TaskRecord | undefined> {
    const taskId = this.byKey.get(keyOf(owner, key));
    return taskId === undefined ? undefined : this.get(taskId);
  }

  async replace(next: TaskRecord, expectedVersion: number): Promise<boolean> {
    const current = this.tasks.get(next.taskId);
    if (!current || current.version !== expectedVersion) return false;
    this.write(structuredClone(next));
    return true;
  }

  async delete(taskId: string): Promise<boolean> {
    const record = this.tasks.get(taskId);
    if (!record) return false;
    this.tasks.delete(taskId);
    this.active.delete(taskId);
    if (record.idempotencyKey !== undefined) this.byKey.delete(keyOf(record.owner, record.idempotencyKey));
    const positions = this.byOwner.get(record.owner);
    if (positions) {
      const index = this.insertionIndex(positions, record);
      if (positions[index]?.taskId === taskId) positions.splice(index, 1);
      if (positions.length === 0) this.byOwner.delete(record.owner);
    }
    return true;
  }

  async list(owner: string, options: { after?: ListPosition; limit: number; now: number }): Promise<TaskRecord[]> {
    const positions = this.byOwner.get(owner) ?? [];
    let index = 0;
    if (options.after) {
      const after = options.after;
      index = this.insertionIndex(positions, after);
      while (index < positions.length && compareDesc(positions[index] as ListPosition, after) <= 0) index++;
    }
    const page: TaskRecord[] = [];
    for (; index < positions.length && page.length < options.limit; index++) {
      const record = this.tasks.get((positions[index] as ListPosition).taskId);
      if (record && (record.expiresAt === null || record.expiresAt > options.now)) page.push(structuredClone(record));
    }
    return page;
  }

  async countActive(owner: string): Promise<number> {
    let count = 0;
    for (const taskId of this.active) if (this.tasks.get(taskId)?.owner === owner) count++;
    return count;
  }

  async sweepExpired(now: number, limit: number): Promise<TaskRecord[]> {
    const removed: TaskRecord[] = [];
    while (removed.length < limit) {
      const key = this.expiry.peekKey();
      if (key === undefined || key > now) break;
      const entry = this.expiry.pop() as { key: number; value: string };
      const record = this.tasks.get(entry.value);
      // Heap entries are not removed on update; skip the ones that no longer match the record.
      if (!record || record.expiresAt !== entry.key) continue;
      await this.delete(record.taskId);
      removed.push(record);
    }
    return removed;
  }

  async findStale(now: number, limit: number): Promise<TaskRecord[]> {
    const stale: TaskRecord[] = [];
    for (const taskId of this.active) {
      const record = this.tasks.get(taskId);
      if (record?.leaseUntil !== undefined && record.leaseUntil < now) stale.push(structuredClone(record));
      if (stale.length >= limit) break;
    }
    return stale;
  }

  async renewLeases(runner: string, leaseUntil: number): Promise<void> {
    for (const taskId of this.active) {
      const record = this.tasks.get(taskId);
      if (record?.runner === runner) record.leaseUntil = leaseUntil;
    }
  }

  async getSecret(): Promise<Uint8Array> {
    return this.secret;
  }

  private write(record: TaskRecord): void {
    const previous = this.tasks.get(record.taskId);
    this.tasks.set(record.taskId, record);
    if (isTerminal(record.status)) this.active.delete(record.taskId);
    else this.active.add(record.taskId);
    if (record.expiresAt !== null && record.expiresAt !== previous?.expiresAt)
      this.expiry.push(record.expiresAt, record.taskId);
  }

  /** First index whose position does not sort before `position` (binary search). */
  private insertionIndex(positions: ListPosition[], position: ListPosition): number {
    let low = 0;
    let high = positions.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (compareDesc(positions[mid] as ListPosition, position) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

function keyOf(owner: string, key: string): string {
  return `${owner.length}:${owner}:${key}`;
}
