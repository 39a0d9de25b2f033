import { MAX_TIMER_MS } from '../RawChannel.js';
import type { TaskSnapshot } from '../TaskSnapshot.js';

const GRACE_MS = 60_000;

/**
 * How long a blocking request about a task may wait: until the receiver may have deleted the task (ttl counts from
 * creation, spec R31 and A9), plus a grace period. Never shorter than the task's own life.
 */
export function waitBudgetMs(snapshot: TaskSnapshot, now: number = Date.now()): number {
  if (typeof snapshot.ttlMs === 'number' && snapshot.createdAt !== undefined && snapshot.dialect !== 'sep-1686') {
    const created = Date.parse(snapshot.createdAt);
    if (Number.isFinite(created)) {
      return Math.min(MAX_TIMER_MS, Math.max(GRACE_MS, created + snapshot.ttlMs - now + GRACE_MS));
    }
  }
  return MAX_TIMER_MS;
}
