// A task's ending crosses processes with its record (when small), so a waiter in another process finishes without
// reading the task back; a large one goes without, and the waiter reads. Two store instances stand for two processes.
import { afterEach, describe, expect, it } from 'vitest';

import { TaskEngine, type TaskOutcome, type TaskStore } from '../../src/engine/index.js';
import { eachStore } from '../stores/eachStore.js';

/** `store` with its reads counted once answered. */
function countingReads(store: TaskStore): { store: TaskStore; reads: () => number } {
  let reads = 0;
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'get')
        return async (taskId: string) => {
          const record = await target.get(taskId);
          reads++;
          return record;
        };
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: counted, reads: () => reads };
}

const open = async (store: TaskStore) => {
  await store.init?.();
  return store;
};

eachStore('terminal_record', open, (name, harness) => {
  // The buses that send messages carry the record; SQLite's signals a change across processes without one.
  if (!harness.sibling || (name !== 'redis' && name !== 'postgres')) return;
  const sibling = harness.sibling;

  describe(`a waiter in another process (${name})`, () => {
    const engines: TaskEngine[] = [];
    afterEach(async () => {
      for (const engine of engines.splice(0)) await engine.close();
    });

    async function twoEngines(eventRecords?: boolean) {
      const first = await harness.create();
      const counted = countingReads(first);
      const waiting = new TaskEngine({ store: counted.store, sweepIntervalMs: 0, recoveryIntervalMs: 0 });
      const ending = new TaskEngine({
        store: await sibling(first),
        sweepIntervalMs: 0,
        recoveryIntervalMs: 0,
        ...(eventRecords !== undefined && { eventRecords }),
      });
      engines.push(ending, waiting);
      await waiting.start();
      await ending.start();
      return { waiting, ending, reads: counted.reads };
    }

    async function endWith(outcome: TaskOutcome, eventRecords?: boolean) {
      const { waiting, ending, reads } = await twoEngines(eventRecords);
      const { task } = await waiting.create({
        owner: 'o',
        dialect: 't',
        request: { method: 'tools/call', params: { name: 'x' } },
      });
      const waited = waiting.waitForTerminal(task.taskId);
      // The wait is subscribed, and its own first read has answered (the task working), before the task ends.
      await expect.poll(reads).toBe(1);
      expect(await ending.complete(task.taskId, outcome, 'done')).toBe(true);
      const ended = await waited;
      const stored = await ending.store.get(task.taskId);
      return { ended, stored, readsAfterEnd: reads() - 1 };
    }

    it('finishes on the record the ending carried, which is the stored one', async () => {
      const { ended, stored, readsAfterEnd } = await endWith({ kind: 'result', result: { content: [] } });
      expect(ended?.status).toBe('completed');
      expect(ended).toEqual(stored);
      expect(readsAfterEnd).toBe(0);
    });

    it('reads the task when the ending process sends no records (eventRecords: false)', async () => {
      const { ended, stored, readsAfterEnd } = await endWith({ kind: 'result', result: { content: [] } }, false);
      expect(ended).toEqual(stored);
      expect(readsAfterEnd).toBe(1);
    });

    it('reads the task when its record is too large to go with the event', async () => {
      const text = 'x'.repeat(8000);
      const { ended, stored, readsAfterEnd } = await endWith({
        kind: 'result',
        result: { content: [{ type: 'text', text }] },
      });
      expect(ended).toEqual(stored);
      expect(readsAfterEnd).toBe(1);
    });
  });
});
