/** What the budget needs of one session's event store. */
export interface BudgetedStore {
  /** The bytes the store holds. */
  readonly bytes: number;
  /** Frees some bytes, least needed first; false when the store is empty. */
  evictOne(): boolean;
}

/**
 * The bytes every session's event store holds together, against one cap. Past the cap, the sessions holding most give
 * up events first: they are lowered to a common level until the total is a sixteenth under the cap. Lowering to a
 * level in one pass, and leaving that slack, makes the cost of a settle (a sort of the sessions) come once per
 * sixteenth of the cap that is filled again, not once per event.
 */
export class EventStoreBudget {
  used = 0;
  readonly stores = new Set<BudgetedStore>();

  constructor(readonly maxBytes: number) {}

  settle(): void {
    if (this.used <= this.maxBytes) return;
    const target = this.maxBytes - Math.floor(this.maxBytes / 16);
    const excess = this.used - target;
    const largest = [...this.stores].sort((a, b) => b.bytes - a.bytes);
    // The level: the k largest stores lowered to it free `excess`, and it is no lower than the (k+1)th store.
    let held = 0;
    let k = 0;
    let level = 0;
    while (k < largest.length) {
      held += (largest[k] as BudgetedStore).bytes;
      k++;
      const next = largest[k]?.bytes ?? 0;
      if (held - k * next >= excess) {
        level = Math.max(next, Math.floor((held - excess) / k));
        break;
      }
    }
    for (const store of largest.slice(0, k)) while (store.bytes > level && store.evictOne());
  }
}
