/** A binary min-heap ordered by `key`; the memory store's expiry index. */
export class MinHeap<T> {
  private readonly items: Array<{ key: number; value: T }> = [];

  get size(): number {
    return this.items.length;
  }

  push(key: number, value: T): void {
    const items = this.items;
    items.push({ key, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((items[parent] as { key: number }).key <= key) break;
      [items[i], items[parent]] = [items[parent] as { key: number; value: T }, items[i] as { key: number; value: T }];
      i = parent;
    }
  }

  peekKey(): number | undefined {
    return this.items[0]?.key;
  }

  pop(): { key: number; value: T } | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < items.length && (items[left] as { key: number }).key < (items[smallest] as { key: number }).key)
        smallest = left;
      if (right < items.length && (items[right] as { key: number }).key < (items[smallest] as { key: number }).key)
        smallest = right;
      if (smallest === i) break;
      [items[i], items[smallest]] = [
        items[smallest] as { key: number; value: T },
        items[i] as { key: number; value: T },
      ];
      i = smallest;
    }
    return top;
  }
}
