import { afterEach, describe, expect, it } from 'vitest';

import { ANY_OWNER, TaskNotFoundError, type TaskEngine } from '../../src/engine/index.js';
import { ManualClock, startEngine } from '../helpers/engines.js';
import { eachStore } from '../stores/eachStore.js';

const request = { method: 'tools/call', params: { name: 'echo', arguments: {} } };

// Every store: PostgreSQL and Redis too, where a write's timeline entries go with the write itself (replacesAlong).
eachStore(
  'engine_timeline',
  async (store) => store,
  (name, harness) => {
    describe(`task timeline through the engine (${name})`, () => {
      let engine: TaskEngine;
      afterEach(async () => engine.close());

      it('records each transition with its time, derived from the stored records', async () => {
        const clock = new ManualClock();
        engine = await startEngine(await harness.create(), { clock });
        const { task } = await engine.create({ owner: 'alice', request, dialect: 'core-2025-11-25', run: false });
        clock.advance(10);
        await engine.markStarted(task.taskId, 'runner-1');
        clock.advance(10);
        const [key] = await engine.requestInput(task.taskId, [
          { method: 'elicitation/create', params: { message: 'Which colour?' } },
        ]);
        clock.advance(10);
        await engine.answerInput('alice', task.taskId, { [key as string]: { result: { action: 'accept' } } });
        clock.advance(10);
        await engine.setStatusMessage(task.taskId, 'painting');
        clock.advance(10);
        await engine.cancel('alice', task.taskId, 'Stopped by an operator', 'console:admin');

        const timeline = await engine.timeline('alice', task.taskId);
        const t0 = task.createdAt;
        expect(timeline).toEqual([
          { at: t0, kind: 'created', status: 'working' },
          { at: t0 + 10, kind: 'started', attempt: 1, runner: 'runner-1' },
          {
            at: t0 + 20,
            kind: 'input_requested',
            key,
            method: 'elicitation/create',
            message: 'Which colour?',
          },
          { at: t0 + 20, kind: 'status', from: 'working', status: 'input_required' },
          { at: t0 + 30, kind: 'input_answered', key },
          { at: t0 + 30, kind: 'status', from: 'input_required', status: 'working' },
          { at: t0 + 40, kind: 'message', message: 'painting' },
          { at: t0 + 50, kind: 'cancelled', by: 'console:admin' },
          { at: t0 + 50, kind: 'status', from: 'working', status: 'cancelled' },
          { at: t0 + 50, kind: 'message', message: 'Stopped by an operator' },
        ]);
      });

      it('records an offer and its first answer, the status unchanged', async () => {
        const clock = new ManualClock();
        engine = await startEngine(await harness.create(), { clock });
        const { task } = await engine.create({ owner: 'alice', request, dialect: 'ext-tasks', run: false });
        await engine.markStarted(task.taskId, 'runner-1');
        clock.advance(10);
        await engine.offer(task.taskId, 1, 'stop', { method: 'elicitation/create', params: { message: 'Stop?' } });
        clock.advance(10);
        await engine.answerInput('alice', task.taskId, { stop: { error: { code: -1, message: 'declined' } } });
        await engine.answerInput('alice', task.taskId, { stop: { result: { action: 'accept' } } });
        const t0 = task.createdAt;
        const timeline = await engine.timeline('alice', task.taskId);
        expect(timeline.filter((entry) => entry.at > t0)).toEqual([
          { at: t0 + 10, kind: 'input_offered', key: 'stop', method: 'elicitation/create', message: 'Stop?' },
          { at: t0 + 20, kind: 'input_answered', key: 'stop', error: true },
        ]);
      });

      it('says who cancelled when no one is named, and is scoped like the task', async () => {
        engine = await startEngine(await harness.create());
        const { task } = await engine.create({ owner: 'bob', request, dialect: 'ext-tasks', run: false });
        await engine.cancel('bob', task.taskId);
        expect((await engine.timeline('bob', task.taskId)).find((e) => e.kind === 'cancelled')).toMatchObject({
          by: 'bob',
        });
        await expect(engine.timeline('mallory', task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
        await expect(engine.timeline(ANY_OWNER, task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
      });

      it('is bounded per task and removed with the task', async () => {
        engine = await startEngine(await harness.create(), { limits: { timelineEntries: 5 } });
        const { task } = await engine.create({ owner: 'carol', request, dialect: 'sep-1686', run: false });
        for (let i = 0; i < 20; i++) await engine.setStatusMessage(task.taskId, `step ${i}`);
        const kept = await engine.timeline('carol', task.taskId);
        expect(kept.map((e) => e.message ?? e.kind)).toEqual(['created', 'step 16', 'step 17', 'step 18', 'step 19']);
        await engine.delete('carol', task.taskId);
        expect(await engine.store.timeline?.read(task.taskId)).toEqual([]);
      });

      it('records a crash recovery', async () => {
        const clock = new ManualClock();
        engine = await startEngine(await harness.create(), { clock, leaseMs: 1000 });
        const { task } = await engine.create({ owner: 'dave', request, dialect: 'core-2025-11-25', run: false });
        await engine.markStarted(task.taskId, 'gone');
        clock.advance(5000);
        await engine.recover();
        const kinds = (await engine.timeline('dave', task.taskId)).map((e) => e.kind);
        expect(kinds).toContain('recovered');
        expect((await engine.timeline('dave', task.taskId)).find((e) => e.kind === 'recovered')).toMatchObject({
          action: 'fail',
        });
      });
    });
  },
);
