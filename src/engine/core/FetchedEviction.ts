import type { Clock } from '../contracts/Clock.js';
import type { EngineLogger } from '../contracts/EngineHooks.js';
import { limitError, type EngineLimits } from './EngineLimits.js';
import type { TaskAccess } from './TaskAccess.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';

/** How long a read of every owner's stored bytes stands for the total byte cap. */
export const TOTAL_BYTES_READ_MS = 1000;

/**
 * Room for new tasks at the stored-task bounds. A terminal task whose outcome reached its requestor (`tasks/result`,
 * or its equivalent on each wire) is marked; at a bound, the marked tasks are evicted, the earliest fetched first,
 * before a creation is refused, so limits stop callers that leave their results lying, never one that fetches them
 * and moves on.
 *
 * spec R31 R71 E9: a receiver may delete a task once its ttl elapsed, and cancelled ones at any time; deleting a
 * fetched task earlier is this server's documented policy (docs/limits.md): its result was delivered, and a later
 * read gets exactly what a missing task gets (spec §1.12: "not found" after deletion is compliant).
 */
export class FetchedEviction {
  private total: { bytes: number; readAt: number } | undefined;

  constructor(
    private readonly access: TaskAccess,
    private readonly clock: Clock,
    private readonly logger: EngineLogger,
    private readonly limits: EngineLimits,
  ) {}

  /** Tasks evicted at once: about 1 % of the stored-task cap (at most 64), so a bound is not met on every creation. */
  get batch(): number {
    return Math.max(1, Math.min(64, Math.floor(this.limits.maxStoredPerOwner / 100)));
  }

  /**
   * Records that `record`'s outcome was delivered. The mark is one small store write, not a record write; it never
   * fails the answer it follows (an unmarked task just waits for its ttl).
   */
  async delivered(record: TaskRecord): Promise<void> {
    const { store } = this.access;
    if (!isTerminal(record.status) || !store.markFetched) return;
    try {
      await this.access.guard(async () => store.markFetched?.(record.taskId, this.clock.now()));
    } catch (error) {
      this.logger.warn({ taskId: record.taskId, error: String(error) }, 'could not mark a task as fetched');
    }
  }

  /** Evicts up to a batch of fetched tasks of `owner` (any owner's when undefined); the number evicted. */
  async evict(owner: string | undefined): Promise<number> {
    const { store } = this.access;
    if (!store.evictFetched) return 0;
    const evicted = await this.access.guard(async () => (await store.evictFetched?.(owner, this.batch)) ?? []);
    for (const taskId of evicted) {
      await this.access.removeAttached(taskId);
      // Waiters of an evicted task wake and find it gone.
      await this.access.publish(taskId);
    }
    if (evicted.length > 0) {
      this.logger.info({ ...(owner !== undefined && { owner }), evicted: evicted.length }, 'fetched tasks evicted');
      if (this.total) this.total.readAt = Number.NEGATIVE_INFINITY;
    }
    return evicted.length;
  }

  /**
   * Refuses a creation while every owner's stored bytes together are at `maxStoredBytesTotal`, once no fetched task
   * is left to evict. The total is re-read at most every `TOTAL_BYTES_READ_MS` (PostgreSQL sums it over owners).
   */
  async checkTotal(): Promise<void> {
    const max = this.limits.maxStoredBytesTotal;
    const { store } = this.access;
    if (max === null || !store.storedBytes) return;
    for (let round = 0; (await this.totalBytes()) >= max; round++) {
      if (round === 4 || (await this.evict(undefined)) === 0) throw limitError(this.limits, 'total_bytes');
    }
  }

  private async totalBytes(): Promise<number> {
    const now = this.clock.now();
    if (this.total && now - this.total.readAt < TOTAL_BYTES_READ_MS) return this.total.bytes;
    const bytes = await this.access.guard(async () => (await this.access.store.storedBytes?.()) ?? 0);
    this.total = { bytes, readAt: now };
    return bytes;
  }
}
