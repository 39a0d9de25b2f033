import { randomUUID } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { StepJournal, StaleLeaseError, type StepJournalStore, type TaskStore } from '../../src/engine/index.js';
import { storePerTest } from './eachStore.js';

export interface JournalHarness {
  /** A fresh, initialised store (with its journal initialised). */
  create(): Promise<TaskStore>;
  /** A second store instance on the same backend (another process would see the same). */
  sibling?(store: TaskStore): Promise<TaskStore>;
}

const journalOf = (store: TaskStore): StepJournalStore => {
  if (!store.journal) throw new Error(`${store.kind} has no journal`);
  return store.journal;
};

/** The step journal contract every store passes unchanged (memory, SQLite, PostgreSQL, Redis). */
export function stepContract(name: string, harness: JournalHarness): void {
  describe(`step journal contract: ${name}`, () => {
    let store: TaskStore;
    let journal: StepJournalStore;
    const opened = storePerTest(harness, (fresh) => {
      store = fresh;
      journal = journalOf(fresh);
    });

    it('journals a completed step so a later run returns its value without running it', async () => {
      const taskId = randomUUID();
      const first = await StepJournal.open(journal, taskId, 1);
      expect(first.beginStep('fetch')).toEqual({ state: 'run', attempt: 1 });
      expect(await first.completeStep('fetch', { rows: [1, 'two', null], text: 'ünï ✓' })).toBe(true);
      const second = await StepJournal.open(journal, taskId, 2);
      expect(second.beginStep('fetch')).toEqual({
        state: 'completed',
        value: { rows: [1, 'two', null], text: 'ünï ✓' },
      });
      expect(second.beginStep('other')).toEqual({ state: 'run', attempt: 1 });
    });

    it('refuses every write of a superseded attempt and keeps what the newer one wrote', async () => {
      const taskId = randomUUID();
      const old = await StepJournal.open(journal, taskId, 1);
      const newer = await StepJournal.open(journal, taskId, 2);
      expect(await old.completeStep('a', 'stale')).toBe(false);
      expect(await old.failStep('b', { name: 'Error', message: 'x' }, { terminal: true })).toBe(false);
      await expect(old.recordSleep('c', Date.now() + 1000)).rejects.toBeInstanceOf(StaleLeaseError);
      await expect(old.recordElicit('d', { method: 'elicitation/create' })).rejects.toBeInstanceOf(StaleLeaseError);
      expect(await newer.completeStep('a', 'fresh')).toBe(true);
      expect(await old.completeStep('a', 'stale again')).toBe(false);
      expect(await journal.read(taskId)).toEqual([expect.objectContaining({ name: 'a', value: 'fresh' })]);
      // An attempt older than the fence can no longer claim the task.
      await expect(StepJournal.open(journal, taskId, 1)).rejects.toBeInstanceOf(StaleLeaseError);
      expect(await journal.fence(taskId, 2)).toBe(true);
      expect(await journal.fence(taskId, 3)).toBe(true);
      expect(await journal.fence(taskId, 2)).toBe(false);
    });

    it('counts failed attempts, waits for a retry until its time and ends a terminal failure for good', async () => {
      const taskId = randomUUID();
      const run = await StepJournal.open(journal, taskId, 1);
      const retryAt = Date.now() + 60_000;
      expect(await run.failStep('flaky', { name: 'Error', message: 'one' }, { retryAtMs: retryAt })).toBe(true);
      expect(run.beginStep('flaky')).toEqual({ state: 'waiting', wakeAt: retryAt });
      expect(await run.failStep('due', { name: 'Error', message: 'x' }, { retryAtMs: Date.now() - 1 })).toBe(true);
      expect(await run.failStep('due', { name: 'Error', message: 'y' }, { retryAtMs: Date.now() - 1 })).toBe(true);
      const next = await StepJournal.open(journal, taskId, 2);
      expect(next.beginStep('due')).toEqual({ state: 'run', attempt: 3 });
      expect(await next.failStep('due', { name: 'TypeError', message: 'bad' }, { terminal: true })).toBe(true);
      const last = await StepJournal.open(journal, taskId, 3);
      expect(last.beginStep('due')).toEqual({ state: 'failed', error: { name: 'TypeError', message: 'bad' } });
    });

    it('keeps the first wake time of a sleep across replays', async () => {
      const taskId = randomUUID();
      const wakeAt = Date.now() + 60_000;
      const run = await StepJournal.open(journal, taskId, 1);
      expect(await run.recordSleep('nap', wakeAt)).toEqual({ state: 'pending', wakeAt });
      const replay = await StepJournal.open(journal, taskId, 2);
      expect(await replay.recordSleep('nap', wakeAt + 5000)).toEqual({ state: 'pending', wakeAt });
      expect(await replay.recordSleep('short', Date.now() - 1)).toEqual({ state: 'completed' });
    });

    it('journals an offer once, its checks with what they saw, and a sleep cut short', async () => {
      const taskId = randomUUID();
      const offer = { method: 'elicitation/create', params: { message: 'Stop?' } };
      const run = await StepJournal.open(journal, taskId, 1);
      await run.recordOffer('stop', offer);
      await run.recordOffer('stop', { method: 'other' });
      await run.recordCheck('check-0', 'stop', { state: 'unanswered' });
      expect(await run.recordSleep('pause-1', Date.now() + 60_000)).toEqual({
        state: 'pending',
        wakeAt: expect.any(Number),
      });
      const replay = await StepJournal.open(journal, taskId, 2);
      expect(replay.kindOf('stop')).toBe('offer');
      expect(replay.offerCount).toBe(1);
      expect(replay.checked('check-0')).toEqual({ state: 'unanswered' });
      expect(replay.consumed('stop')).toBe(false);
      await replay.endSleep('pause-1');
      const response = { action: 'accept', content: { stop: true, note: 'ünï ✓' } };
      await replay.recordCheck('check-1', 'stop', { state: 'answered', response });
      const last = await StepJournal.open(journal, taskId, 3);
      expect(await last.recordSleep('pause-1', Date.now() + 60_000)).toEqual({ state: 'completed' });
      expect(last.checked('check-1')).toEqual({ state: 'answered', response });
      expect(last.consumed('stop')).toBe(true);
      expect((await journal.read(taskId)).find((row) => row.name === 'stop')).toMatchObject({
        kind: 'offer',
        state: 'waiting',
        request: offer,
      });
      await expect(replay.recordOffer('later', offer)).rejects.toBeInstanceOf(StaleLeaseError);
      await expect(replay.recordCheck('check-2', 'stop', { state: 'unanswered' })).rejects.toBeInstanceOf(
        StaleLeaseError,
      );
    });

    it('journals a question, its answer once, and a deadline that passes unanswered', async () => {
      const taskId = randomUUID();
      const question = { method: 'elicitation/create', params: { message: 'ok?' } };
      const run = await StepJournal.open(journal, taskId, 1);
      expect(await run.recordElicit('confirm', question)).toEqual({ state: 'pending', request: question });
      expect(await run.recordElicit('late', question, Date.now() - 1)).toEqual({
        state: 'pending',
        request: question,
        wakeAt: expect.any(Number),
      });
      const next = await StepJournal.open(journal, taskId, 2);
      expect(await next.answerElicit('confirm', { action: 'accept', content: { ok: true } })).toBe(true);
      expect(await next.answerElicit('confirm', { action: 'decline' })).toBe(false);
      expect(await next.recordElicit('late', question)).toEqual({ state: 'timed_out' });
      const last = await StepJournal.open(journal, taskId, 3);
      expect(await last.recordElicit('confirm', question)).toEqual({
        state: 'answered',
        response: { action: 'accept', content: { ok: true } },
      });
      expect(await last.answerElicit('late', { action: 'accept' })).toBe(false);
      expect(await last.recordElicit('late', question)).toEqual({ state: 'timed_out' });
    });

    it('keeps one durable timer per task, lists due ones earliest first and clears only the one it was given', async () => {
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      const now = Date.now();
      await journal.setWake(a, now + 300);
      await journal.setWake(b, now + 100);
      await journal.setWake(c, now + 10_000);
      await journal.setWake(a, now + 200);
      expect(await journal.due(now + 1000, 10)).toEqual([
        { taskId: b, wakeAt: now + 100 },
        { taskId: a, wakeAt: now + 200 },
      ]);
      expect(await journal.due(now + 1000, 1)).toEqual([{ taskId: b, wakeAt: now + 100 }]);
      await journal.clearWake(a, now + 300);
      await journal.clearWake(b, now + 100);
      expect(await journal.due(now + 1000, 10)).toEqual([{ taskId: a, wakeAt: now + 200 }]);
      // A timer set on a task does not disturb its fence.
      await StepJournal.open(journal, c, 4);
      await journal.setWake(c, now + 50);
      expect(await journal.fence(c, 3)).toBe(false);
    });

    it('removes a task’s rows, fence and timer', async () => {
      const taskId = randomUUID();
      const run = await StepJournal.open(journal, taskId, 5);
      await run.completeStep('a', 1);
      await journal.setWake(taskId, Date.now());
      await journal.remove(taskId);
      expect(await journal.read(taskId)).toEqual([]);
      expect(await journal.due(Date.now() + 1000, 10)).toEqual([]);
      expect(await journal.fence(taskId, 1)).toBe(true);
    });

    if (harness.sibling) {
      it('shares rows and fences with another instance on the same backend', async () => {
        const other = await (harness.sibling as NonNullable<JournalHarness['sibling']>)(store);
        opened.push(other);
        const taskId = randomUUID();
        const run = await StepJournal.open(journal, taskId, 1);
        await run.completeStep('a', 'from one');
        const takeover = await StepJournal.open(journalOf(other), taskId, 2);
        expect(takeover.beginStep('a')).toEqual({ state: 'completed', value: 'from one' });
        expect(await run.completeStep('b', 'stale')).toBe(false);
      });
    }
  });
}
