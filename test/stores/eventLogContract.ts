import { describe, expect, it } from 'vitest';

import { eventLogTopic, type TaskEventLog, type TaskStore } from '../../src/engine/index.js';
import { storePerTest, type EachStoreHarness } from './eachStore.js';

const logOf = (store: TaskStore): TaskEventLog => {
  if (!store.eventLog) throw new Error(`${store.kind} has no event log`);
  return store.eventLog;
};

const event = (n: number, key?: string) => ({
  type: 'io.github.mcp-tasks.stage',
  data: { stage: n, note: `ünï ✓ ${n}` },
  at: 1_000 + n,
  ...(key !== undefined && { key }),
});

/** The event log contract every store passes unchanged (memory, SQLite, PostgreSQL, Redis). */
export function eventLogContract(name: string, harness: EachStoreHarness): void {
  describe(`task event log contract: ${name}`, () => {
    let store: TaskStore;
    const opened = storePerTest(harness, (fresh) => (store = fresh));

    // spec TE2: seq per task from 0, one more each time, read back in order and exactly.
    it('numbers each task’s entries from 0 and reads them back in order, exactly', async () => {
      const log = logOf(store);
      for (let i = 0; i < 5; i++) expect(await log.append('task-a', event(i), 100)).toEqual({ appended: true, seq: i });
      expect(await log.append('task-b', event(9), 100)).toEqual({ appended: true, seq: 0 });
      const all = await log.read('task-a', 0, 100);
      expect(all).toEqual(
        [0, 1, 2, 3, 4].map((i) => ({ seq: i, type: event(i).type, data: event(i).data, at: 1_000 + i })),
      );
      expect(await log.length('task-a')).toBe(5);
      expect(await log.length('missing')).toBe(0);
      expect(await log.read('missing', 0, 10)).toEqual([]);
    });

    // spec V38: pages from any position.
    it('reads a page from any position', async () => {
      const log = logOf(store);
      for (let i = 0; i < 7; i++) await log.append('task-a', event(i), 100);
      expect((await log.read('task-a', 2, 3)).map((e) => e.seq)).toEqual([2, 3, 4]);
      expect((await log.read('task-a', 5, 10)).map((e) => e.seq)).toEqual([5, 6]);
      expect(await log.read('task-a', 7, 10)).toEqual([]);
      expect(await log.read('task-a', 0, 0)).toEqual([]);
    });

    it('appends a keyed entry once: a second append with the key answers the first seq and stores nothing', async () => {
      const log = logOf(store);
      await log.append('task-a', event(0), 100);
      expect(await log.append('task-a', event(1, 'step-1'), 100)).toEqual({ appended: true, seq: 1 });
      expect(await log.append('task-a', event(2, 'step-1'), 100)).toEqual({
        appended: false,
        reason: 'duplicate',
        seq: 1,
      });
      // Keys are per task.
      expect(await log.append('task-b', event(2, 'step-1'), 100)).toEqual({ appended: true, seq: 0 });
      expect((await log.read('task-a', 0, 10)).map((e) => e.data['stage'])).toEqual([0, 1]);
    });

    it('is bounded per task: at the bound an append is refused and nothing is dropped', async () => {
      const log = logOf(store);
      for (let i = 0; i < 3; i++) await log.append('task-a', event(i), 3);
      expect(await log.append('task-a', event(3), 3)).toEqual({ appended: false, reason: 'limit' });
      expect((await log.read('task-a', 0, 10)).map((e) => e.seq)).toEqual([0, 1, 2]);
      // A keyed append seen before still answers its seq at the bound.
      await log.append('task-b', event(0, 'k'), 1);
      expect(await log.append('task-b', event(0, 'k'), 1)).toEqual({ appended: false, reason: 'duplicate', seq: 0 });
    });

    it('goes with its task', async () => {
      const log = logOf(store);
      await log.append('task-a', event(0, 'k'), 10);
      await log.append('task-b', event(0), 10);
      await log.remove('task-a');
      expect(await log.read('task-a', 0, 10)).toEqual([]);
      expect(await log.length('task-a')).toBe(0);
      // The key went too: the same key starts a fresh log.
      expect(await log.append('task-a', event(5, 'k'), 10)).toEqual({ appended: true, seq: 0 });
      expect(await log.length('task-b')).toBe(1);
    });

    it('hands out fresh copies', async () => {
      const log = logOf(store);
      await log.append('task-a', event(0), 10);
      const [first] = await log.read('task-a', 0, 1);
      (first as { data: Record<string, unknown> }).data['stage'] = 'changed';
      expect((await log.read('task-a', 0, 1))[0]?.data['stage']).toBe(0);
    });

    it('numbers appends from two instances at once without gaps or repeats', async () => {
      if (!harness.sibling) return;
      const other = await harness.sibling(store);
      opened.push(other);
      const [a, b] = [logOf(store), logOf(other)];
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).append('task-a', event(i), 1000)),
      );
      const seqs = results.map((r) => (r.appended ? r.seq : -1)).sort((x, y) => x - y);
      expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect((await b.read('task-a', 0, 100)).map((e) => e.seq)).toEqual(seqs);
      // The bound holds across instances too.
      const capped = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).append('task-c', event(i), 4)),
      );
      expect(capped.filter((r) => r.appended)).toHaveLength(4);
    });

    it('announces an append to readers in another instance on the event log topic', async () => {
      if (!harness.sibling) return;
      const other = await harness.sibling(store);
      opened.push(other);
      const heard = new Promise<void>((resolve) => other.events.subscribe(eventLogTopic('task-a'), () => resolve()));
      // Give the subscriber connection a moment to be listening.
      await new Promise((r) => setTimeout(r, 100));
      await logOf(store).append('task-a', event(0), 10);
      await store.events.publish(eventLogTopic('task-a'));
      await heard;
      expect((await logOf(other).read('task-a', 0, 10)).map((e) => e.seq)).toEqual([0]);
    });
  });
}
