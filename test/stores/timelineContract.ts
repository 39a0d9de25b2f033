import { describe, expect, it } from 'vitest';

import { timelineEntries, type TaskStore, type TaskTimelineStore, type TimelineEntry } from '../../src/engine/index.js';
import { makeRecord } from '../helpers/records.js';
import { storePerTest, type EachStoreHarness } from './eachStore.js';

const timelineOf = (store: TaskStore): TaskTimelineStore => {
  if (!store.timeline) throw new Error(`${store.kind} has no timeline`);
  return store.timeline;
};

const entry = (at: number, message: string): TimelineEntry => ({ at, kind: 'message', message });

/** The timeline contract every store passes unchanged (memory, SQLite, PostgreSQL, Redis). */
export function timelineContract(name: string, harness: EachStoreHarness): void {
  describe(`task timeline contract: ${name}`, () => {
    let store: TaskStore;
    const opened = storePerTest(harness, (fresh) => (store = fresh));

    it('keeps appended entries in order, exactly, per task', async () => {
      const record = makeRecord();
      await store.insert(record);
      const timeline = timelineOf(store);
      const created = timelineEntries(undefined, record);
      await timeline.append(record.taskId, created, 200);
      const asked: TimelineEntry = {
        at: 7,
        kind: 'input_requested',
        key: 'input-1-ab',
        method: 'elicitation/create',
        message: 'Name? ünï ✓',
      };
      await timeline.append(
        record.taskId,
        [asked, { at: 8, kind: 'status', from: 'working', status: 'input_required' }],
        200,
      );
      await timeline.append('other-task', [entry(1, 'not mine')], 200);
      expect(await timeline.read(record.taskId)).toEqual([
        ...created,
        asked,
        { at: 8, kind: 'status', from: 'working', status: 'input_required' },
      ]);
      expect(await timeline.read('missing')).toEqual([]);
    });

    it('is bounded per task: the first entry and the newest are kept', async () => {
      const record = makeRecord();
      await store.insert(record);
      const timeline = timelineOf(store);
      for (let i = 0; i < 12; i++) await timeline.append(record.taskId, [entry(i, `m${i}`)], 5);
      const kept = await timeline.read(record.taskId);
      expect(kept.map((e) => e.message)).toEqual(['m0', 'm8', 'm9', 'm10', 'm11']);
      // One append of more than the bound holds, at once, to the same rule.
      const other = makeRecord();
      await store.insert(other);
      await timeline.append(
        other.taskId,
        Array.from({ length: 8 }, (_, i) => entry(i, `n${i}`)),
        3,
      );
      await timeline.append(other.taskId, [entry(8, 'n8'), entry(9, 'n9'), entry(10, 'n10')], 3);
      expect((await timeline.read(other.taskId)).map((e) => e.message)).toEqual(['n0', 'n9', 'n10']);
    });

    it('is removed with the task', async () => {
      const record = makeRecord();
      await store.insert(record);
      const timeline = timelineOf(store);
      await timeline.append(record.taskId, [entry(1, 'a')], 10);
      await timeline.remove(record.taskId);
      expect(await timeline.read(record.taskId)).toEqual([]);
    });

    if (harness.sibling) {
      it('is shared by every instance on the backend, appends from both kept', async () => {
        const record = makeRecord();
        await store.insert(record);
        const other = await (harness.sibling as NonNullable<EachStoreHarness['sibling']>)(store);
        opened.push(other);
        await Promise.all([
          ...Array.from({ length: 5 }, (_, i) => timelineOf(store).append(record.taskId, [entry(i, `a${i}`)], 100)),
          ...Array.from({ length: 5 }, (_, i) => timelineOf(other).append(record.taskId, [entry(i, `b${i}`)], 100)),
        ]);
        const kept = await timelineOf(other).read(record.taskId);
        expect(kept.map((e) => e.message).sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'b0', 'b1', 'b2', 'b3', 'b4']);
      });
    }
  });
}
