import { expiryFromCreation, SEP_GENERATION } from '../../protocol/index.js';
import { MAX_TIMER_MS } from '../RawChannel.js';
import type { TaskSnapshot } from '../TaskSnapshot.js';

const GRACE_MS = 60_000;

/**
 * How long a blocking request about a task may wait: until the receiver may have deleted the task (ttl counts from
 * creation, spec R31 and A9), plus a grace period. Never shorter than the task's own life.
 */
export function waitBudgetMs(snapshot: TaskSnapshot, now: number = Date.now()): number {
  // SEP-1686 counts its keepAlive from the end, not from creation.
  const expiry =
    snapshot.dialect === SEP_GENERATION ? undefined : expiryFromCreation(snapshot.createdAt, snapshot.ttlMs);
  if (expiry === undefined) return MAX_TIMER_MS;
  return Math.min(MAX_TIMER_MS, Math.max(GRACE_MS, expiry - now + GRACE_MS));
}
