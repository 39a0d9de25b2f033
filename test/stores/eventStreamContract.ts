import { describe, expect, it } from 'vitest';

import type { EventStreamLog, NewStreamedEvent, TaskStore } from '../../src/engine/index.js';
import { storePerTest, type EachStoreHarness } from './eachStore.js';

const streamsOf = (store: TaskStore): EventStreamLog => {
  if (!store.eventStreams) throw new Error(`${store.kind} has no event streams`);
  return store.eventStreams;
};

/** Data a store could alter on the way through: non-ASCII text, nesting, empty containers, a large integer. */
const event = (n: number, owner: string | null = null): NewStreamedEvent => ({
  at: 1_700_000_000_000 + n,
  owner,
  data: { n, note: `ünï ✓ ${n}`, nested: { list: [n, 'x'], empty: [], none: {} }, big: 2 ** 53 - 1 - n },
});

const STREAM = 'io.github.mcp-tasks/ping:v1';

/** The event stream contract every store passes unchanged (memory, SQLite, PostgreSQL, Redis). */
export function eventStreamContract(name: string, harness: EachStoreHarness): void {
  describe(`event stream contract: ${name}`, () => {
    let store: TaskStore;
    const opened = storePerTest(harness, (fresh) => (store = fresh));

    /** Another instance on the same backend (another process would see the same). */
    const sibling = async (of: TaskStore): Promise<TaskStore> => {
      const other = await (harness.sibling as NonNullable<EachStoreHarness['sibling']>)(of);
      opened.push(other);
      return other;
    };

    it('starts a stream empty, at 0', async () => {
      const streams = streamsOf(store);
      expect(await streams.head(STREAM)).toBe(0);
      expect(await streams.read(STREAM, 0, 10)).toEqual([]);
    });

    it('numbers appends from 0 and reads them back in order, exactly', async () => {
      const streams = streamsOf(store);
      expect(await streams.append(STREAM, event(0), 100)).toBe(0);
      expect(await streams.append(STREAM, event(1, 'alice'), 100)).toBe(1);
      expect(await streams.append(STREAM, event(2), 100)).toBe(2);
      expect(await streams.head(STREAM)).toBe(3);
      expect(await streams.read(STREAM, 0, 10)).toEqual([
        { seq: 0, ...event(0) },
        { seq: 1, ...event(1, 'alice') },
        { seq: 2, ...event(2) },
      ]);
    });

    it('reads a page from any position', async () => {
      const streams = streamsOf(store);
      for (let i = 0; i < 7; i++) await streams.append(STREAM, event(i), 100);
      expect((await streams.read(STREAM, 2, 3)).map((e) => e.seq)).toEqual([2, 3, 4]);
      expect((await streams.read(STREAM, 5, 10)).map((e) => e.seq)).toEqual([5, 6]);
      expect((await streams.read(STREAM, 3, 1))[0]).toEqual({ seq: 3, ...event(3) });
      expect(await streams.read(STREAM, 7, 10)).toEqual([]);
      expect(await streams.read(STREAM, 0, 0)).toEqual([]);
    });

    it('keeps the newest `keep` entries and goes on numbering', async () => {
      const streams = streamsOf(store);
      for (let i = 0; i < 5; i++) expect(await streams.append(STREAM, event(i), 3)).toBe(i);
      expect((await streams.read(STREAM, 0, 10)).map((e) => e.seq)).toEqual([2, 3, 4]);
      expect((await streams.read(STREAM, 1, 2)).map((e) => e.seq)).toEqual([2, 3]);
      expect((await streams.read(STREAM, 3, 10))[0]).toEqual({ seq: 3, ...event(3) });
      expect(await streams.head(STREAM)).toBe(5);
      expect(await streams.append(STREAM, event(5), 1)).toBe(5);
      expect(await streams.read(STREAM, 0, 10)).toEqual([{ seq: 5, ...event(5) }]);
      expect(await streams.head(STREAM)).toBe(6);
    });

    it('keeps streams apart', async () => {
      const streams = streamsOf(store);
      for (let i = 0; i < 4; i++) await streams.append('stream-a', event(i), 2);
      expect(await streams.append('stream-b', event(9, 'bob'), 10)).toBe(0);
      expect(await streams.head('stream-a')).toBe(4);
      expect(await streams.head('stream-b')).toBe(1);
      expect((await streams.read('stream-a', 0, 10)).map((e) => e.seq)).toEqual([2, 3]);
      expect(await streams.read('stream-b', 0, 10)).toEqual([{ seq: 0, ...event(9, 'bob') }]);
      // Two epochs of 48 random bits each: equal only if one were shared.
      expect(await streams.epoch('stream-a')).not.toBe(await streams.epoch('stream-b'));
    });

    it('keeps a stream’s epoch from its first use on', async () => {
      const streams = streamsOf(store);
      const epoch = await streams.epoch(STREAM);
      expect(epoch).toMatch(/^\S+$/);
      expect(await streams.epoch(STREAM)).toBe(epoch);
      await streams.append(STREAM, event(0), 10);
      expect(await streams.epoch(STREAM)).toBe(epoch);
      // An append may be a stream's first use too.
      await streams.append('stream-b', event(0), 10);
      const made = await streams.epoch('stream-b');
      expect(await streams.epoch('stream-b')).toBe(made);
    });

    it('hands out fresh copies', async () => {
      const streams = streamsOf(store);
      await streams.append(STREAM, event(0), 10);
      const [first] = await streams.read(STREAM, 0, 1);
      (first as { data: Record<string, unknown> }).data['n'] = 'changed';
      expect((await streams.read(STREAM, 0, 1))[0]?.data['n']).toBe(0);
    });

    // Only where another instance exists (file and server stores).
    if (harness.sibling)
      it('shares the epoch, the entries and the numbering with another instance', async () => {
        const other = await sibling(store);
        const [mine, theirs] = [streamsOf(store), streamsOf(other)];
        // Both asking for a new stream's epoch at once agree on one (several streams: the race is up to the timing).
        for (let i = 0; i < 10; i++) {
          const made = await Promise.all([mine, theirs, mine, theirs].map((log) => log.epoch(`${STREAM}-${i}`)));
          expect(new Set(made).size).toBe(1);
        }
        const epochs = await Promise.all([mine.epoch(STREAM), theirs.epoch(STREAM)]);
        expect(epochs[1]).toBe(epochs[0]);
        await mine.append(STREAM, event(0), 10);
        await mine.append(STREAM, event(1, 'alice'), 10);
        expect(await theirs.head(STREAM)).toBe(2);
        expect(await theirs.read(STREAM, 0, 10)).toEqual([
          { seq: 0, ...event(0) },
          { seq: 1, ...event(1, 'alice') },
        ]);
        expect(await theirs.append(STREAM, event(2), 10)).toBe(2);
        expect((await mine.read(STREAM, 0, 10)).map((e) => e.seq)).toEqual([0, 1, 2]);
        expect(await theirs.epoch(STREAM)).toBe(epochs[0]);
        // A stream first used by an append gets one epoch for every instance too.
        await theirs.append('stream-b', event(0), 10);
        expect(await mine.epoch('stream-b')).toBe(await theirs.epoch('stream-b'));
      });

    it('numbers appends made at once without gaps or repeats (from two instances where the store has them)', async () => {
      const other = harness.sibling ? await sibling(store) : store;
      const [a, b] = [streamsOf(store), streamsOf(other)];
      const seqs = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).append(STREAM, event(i), 1000)),
      );
      const all = Array.from({ length: 40 }, (_, i) => i);
      expect([...seqs].sort((x, y) => x - y)).toEqual(all);
      expect((await b.read(STREAM, 0, 100)).map((e) => e.seq)).toEqual(all);
      // Each seq went to the entry of the append that answered it.
      const bySeq = new Map((await a.read(STREAM, 0, 100)).map((e) => [e.seq, e.data['n']]));
      expect(seqs.map((seq) => bySeq.get(seq))).toEqual(all);
      expect(await a.head(STREAM)).toBe(40);
    });

    it('holds the bound when appends made at once drop entries (from four instances where the store has them)', async () => {
      const instances = harness.sibling
        ? [store, ...(await Promise.all([1, 2, 3].map(() => sibling(store))))]
        : [store];
      const logs = instances.map(streamsOf);
      const logAt = (i: number) => logs[i % logs.length] as EventStreamLog;
      // Appends that wait for one another (a server store's) must still drop what those just ahead of them stored;
      // whether one waits is up to the timing, so several short bursts.
      for (let burst = 0; burst < 10; burst++) {
        const stream = `${STREAM}-${burst}`;
        await Promise.all(Array.from({ length: 20 }, (_, i) => logAt(i).append(stream, event(i), 3)));
        for (const log of logs) expect((await log.read(stream, 0, 100)).map((e) => e.seq)).toEqual([17, 18, 19]);
        expect((await logAt(1).read(stream, 10, 100)).map((e) => e.seq)).toEqual([17, 18, 19]);
        expect(await logAt(2).head(stream)).toBe(20);
      }
    });

    it('reads a consistent page while entries are appended and dropped', async () => {
      // Larger than the appends made while a read runs, so an entry near the head is kept until the read is done.
      const keep = 20;
      const other = harness.sibling ? await sibling(store) : store;
      const [writer, reader] = [streamsOf(store), streamsOf(other)];
      let writing = true;
      const appends = (async () => {
        for (let i = 0; i < 60; i++)
          await Promise.all([0, 1].map((k) => writer.append(STREAM, event(2 * i + k), keep)));
      })().finally(() => (writing = false));
      let reads = 0;
      while (writing || reads === 0) {
        const before = await reader.head(STREAM);
        // From the start, or from an entry near the head.
        const from = reads++ % 2 === 0 ? 0 : Math.max(0, before - 1);
        const page = await reader.read(STREAM, from, 50);
        const after = await reader.head(STREAM);
        const seqs = page.map((e) => e.seq);
        // Read at one moment between `before` and `after`: the kept entries from `from` on, in order, without gaps.
        expect(page.length).toBeLessThanOrEqual(keep);
        expect(seqs.every((seq, i) => seq >= from && seq < after && (i === 0 || seq === seqs[i - 1]! + 1))).toBe(true);
        if (from === 0 && before >= keep) expect(page).toHaveLength(keep);
        if (from < before && from >= after - keep) expect(seqs[0]).toBe(from);
        // Each entry is one of the pair of appends made at once that took its seq.
        for (const e of page) expect(Math.floor((e.data['n'] as number) / 2)).toBe(Math.floor(e.seq / 2));
        // A store that reads synchronously (SQLite) settles an append only on a later turn of the event loop.
        await new Promise((resolve) => setImmediate(resolve));
      }
      await appends;
      expect((await reader.read(STREAM, 0, 50)).map((e) => e.seq)).toEqual(
        Array.from({ length: keep }, (_, i) => 100 + i),
      );
    });

    // Only where another instance exists (file and server stores).
    if (harness.sibling)
      it('survives a restart of the store (file and server stores)', async () => {
        const streams = streamsOf(store);
        for (let i = 0; i < 4; i++) await streams.append(STREAM, event(i, i % 2 === 0 ? null : 'alice'), 3);
        const epoch = await streams.epoch(STREAM);
        await store.close();
        opened.splice(opened.indexOf(store), 1);
        const reopened = streamsOf(await sibling(store));
        expect(await reopened.epoch(STREAM)).toBe(epoch);
        expect(await reopened.head(STREAM)).toBe(4);
        expect(await reopened.read(STREAM, 0, 10)).toEqual(
          [1, 2, 3].map((i) => ({ seq: i, ...event(i, i % 2 === 0 ? null : 'alice') })),
        );
        expect(await reopened.append(STREAM, event(4), 3)).toBe(4);
        expect((await reopened.read(STREAM, 0, 10)).map((e) => e.seq)).toEqual([2, 3, 4]);
      });
  });
}
