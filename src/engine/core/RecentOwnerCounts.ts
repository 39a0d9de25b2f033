/** How long one count of an owner's active tasks serves that owner's next creations here. */
export const COUNT_REUSE_MS = 100;
/** Owners whose last count is kept; the least recently counted goes first. */
const MAX_OWNERS = 1024;

/**
 * The active-task counts this process read lately, per owner, so a busy owner's creations far below its cap do not
 * each read the count again: a count serves for COUNT_REUSE_MS, raised by the tasks created here since. It can lag
 * what other processes created in the meantime, so it is used only where it merely orders the queue (far below the
 * cap); the store's insert enforces the cap in any case.
 */
export class RecentOwnerCounts {
  private readonly counts = new Map<string, { active: number; at: number }>();

  /** The owner's count read within COUNT_REUSE_MS, with the creations here since; undefined if none is that recent. */
  recent(owner: string, now: number): number | undefined {
    const entry = this.counts.get(owner);
    if (!entry) return undefined;
    if (now - entry.at < COUNT_REUSE_MS) return entry.active;
    this.counts.delete(owner);
    return undefined;
  }

  /** A count just read from the store. */
  counted(owner: string, active: number, now: number): void {
    this.counts.delete(owner);
    this.counts.set(owner, { active, at: now });
    if (this.counts.size > MAX_OWNERS) this.counts.delete(this.counts.keys().next().value as string);
  }

  /** Drops the owner's count: a creation of its failed, so the next one reads the store (and meets its state). */
  forget(owner: string): void {
    this.counts.delete(owner);
  }

  /** A task of the owner was stored here, after its count. */
  created(owner: string): void {
    const entry = this.counts.get(owner);
    if (entry) entry.active += 1;
  }
}
