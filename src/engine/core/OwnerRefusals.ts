import type { TaskLimitError } from '../record/TaskError.js';

/** Owners whose refusals are kept at most: the least recently refused is forgotten beyond it. */
export const MAX_REFUSED_OWNERS = 1000;

export type RefusalLimit = TaskLimitError['limit'];

/**
 * Refusals at a documented limit (concurrent or stored tasks, bytes, rate) by owner, counted in this process since it
 * started, for the console's owners view. Bounded: at most MAX_REFUSED_OWNERS owners, each a handful of counters.
 */
export class OwnerRefusals {
  private readonly owners = new Map<string, Partial<Record<RefusalLimit, number>>>();

  constructor(private readonly maxOwners = MAX_REFUSED_OWNERS) {}

  note(owner: string, limit: RefusalLimit): void {
    const counts = this.owners.get(owner) ?? {};
    counts[limit] = (counts[limit] ?? 0) + 1;
    // Re-inserted, so the map's order is least recently refused first.
    this.owners.delete(owner);
    this.owners.set(owner, counts);
    for (const oldest of this.owners.keys()) {
      if (this.owners.size <= this.maxOwners) break;
      this.owners.delete(oldest);
    }
  }

  /** The owner's refusals by limit (empty when none, or forgotten). */
  of(owner: string): Partial<Record<RefusalLimit, number>> {
    return { ...this.owners.get(owner) };
  }

  /** Owners refused, most recently refused first, with their counts. */
  entries(): Array<{ owner: string; refused: Partial<Record<RefusalLimit, number>> }> {
    return [...this.owners].reverse().map(([owner, refused]) => ({ owner, refused: { ...refused } }));
  }
}
