import { describe, expect, it } from 'vitest';

import { COUNT_REUSE_MS, RecentOwnerCounts } from '../../src/engine/core/RecentOwnerCounts.js';

describe('RecentOwnerCounts', () => {
  it('serves a count for COUNT_REUSE_MS, raised by the tasks created here since', () => {
    const counts = new RecentOwnerCounts();
    expect(counts.recent('o', 1_000)).toBeUndefined();
    counts.created('o'); // nothing counted yet: nothing to raise
    expect(counts.recent('o', 1_000)).toBeUndefined();
    counts.counted('o', 7, 1_000);
    counts.created('o');
    counts.created('o');
    expect(counts.recent('o', 1_000 + COUNT_REUSE_MS - 1)).toBe(9);
    expect(counts.recent('p', 1_000)).toBeUndefined();
    expect(counts.recent('o', 1_000 + COUNT_REUSE_MS)).toBeUndefined();
    // Once too old it is gone: a later creation does not raise a stale count.
    counts.created('o');
    counts.counted('o', 3, 5_000);
    expect(counts.recent('o', 5_000)).toBe(3);
    counts.forget('o');
    expect(counts.recent('o', 5_000)).toBeUndefined();
  });

  it('keeps the last 1024 owners counted, dropping the least recently counted', () => {
    const counts = new RecentOwnerCounts();
    for (let i = 0; i < 1024; i++) counts.counted(`o${i}`, i, 0);
    counts.counted('o0', 0, 1); // counted again: now the most recent
    counts.counted('new', 1, 1);
    expect(counts.recent('o0', 1)).toBe(0);
    expect(counts.recent('o1', 1)).toBeUndefined();
    expect(counts.recent('o2', 1)).toBe(2);
    expect(counts.recent('new', 1)).toBe(1);
  });
});
