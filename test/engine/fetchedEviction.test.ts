import { afterEach, describe, expect, it } from 'vitest';

import { TaskLimitError, TaskNotFoundError, type TaskEngine, type TaskRequest } from '../../src/engine/index.js';
import { TOTAL_BYTES_READ_MS } from '../../src/engine/core/FetchedEviction.js';
import { eachStore } from '../stores/eachStore.js';
import { ManualClock, startEngine } from '../helpers/engines.js';

const request: TaskRequest = { method: 'tools/call', params: { name: 'work', arguments: { n: 1 } } };
/** About 2.5 KB as stored, so the byte caps below are met after a known number of tasks. */
const padded: TaskRequest = { method: 'tools/call', params: { name: 'work', arguments: { pad: 'x'.repeat(2400) } } };
const result = { kind: 'result' as const, result: { content: [{ type: 'text', text: 'done' }] } };

eachStore(
  'engine_fetched',
  async (store) => store,
  (name, harness) => {
    describe(`room at the stored-task bounds: ${name}`, () => {
      const engines: TaskEngine[] = [];
      const open = async (limits: Partial<TaskEngine['limits']>) => {
        const clock = new ManualClock();
        const engine = await startEngine(await harness.create(), { clock, limits });
        engines.push(engine);
        return { engine, clock };
      };
      afterEach(async () => {
        for (const engine of engines.splice(0)) await engine.close();
      });

      const finish = async (engine: TaskEngine, owner = 'o', asked = request) => {
        const { task } = await engine.create({ owner, request: asked, dialect: 't' });
        await engine.complete(task.taskId, result);
        return engine.get(owner, task.taskId);
      };
      const refusal = (promise: Promise<unknown>) =>
        promise.then(
          () => undefined,
          (error: unknown) => error,
        );

      it('admits an owner at its cap by evicting its earliest fetched task, and refuses when none was fetched', async () => {
        const { engine, clock } = await open({ maxStoredPerOwner: 3 });
        const first = await finish(engine);
        const second = await finish(engine);
        const third = await finish(engine);
        clock.advance(10);
        await engine.resultDelivered(second);
        clock.advance(10);
        await engine.resultDelivered(first);

        const fourth = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
        await expect(engine.get('o', second.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
        expect((await engine.get('o', first.taskId)).status).toBe('completed');
        await engine.create({ owner: 'o', request, dialect: 't' });
        await expect(engine.get('o', first.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);

        // Left: third (finished, never fetched) and two running tasks: nothing a well-behaved client is done with.
        const refused = await refusal(engine.create({ owner: 'o', request, dialect: 't' }));
        expect(refused).toBeInstanceOf(TaskLimitError);
        expect((refused as TaskLimitError).limit).toBe('stored_tasks');
        expect((await engine.get('o', third.taskId)).status).toBe('completed');
        expect((await engine.get('o', fourth.taskId)).status).toBe('working');
        // A task read while running was not delivered: marking it does nothing, and it is not evicted later.
        await engine.resultDelivered(fourth);
        await engine.complete(fourth.taskId, result);
        expect(await refusal(engine.create({ owner: 'o', request, dialect: 't' }))).toBeInstanceOf(TaskLimitError);
        await engine.resultDelivered(await engine.get('o', third.taskId));
        await engine.create({ owner: 'o', request, dialect: 't' });
        await expect(engine.get('o', third.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
      });

      it('evicts fetched tasks at the owner’s byte cap, and refuses unfetched ones', async () => {
        const { engine } = await open({ maxStoredBytesPerOwner: 10_000 });
        const fetched = [];
        for (let i = 0; i < 3; i++) fetched.push(await finish(engine, 'o', padded));
        const unfetched = await finish(engine, 'o', padded);
        for (const task of fetched) await engine.resultDelivered(task);
        expect(await engine.store.storedBytes?.()).toBeGreaterThanOrEqual(10_000);
        // At the cap: the fetched tasks make room (a batch at once), the unfetched one stays.
        await engine.create({ owner: 'o', request: padded, dialect: 't' });
        for (const task of fetched)
          await expect(engine.get('o', task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
        expect((await engine.get('o', unfetched.taskId)).status).toBe('completed');
        let refused: unknown;
        for (let i = 0; i < 10 && !refused; i++)
          refused = await refusal(engine.create({ owner: 'o', request: padded, dialect: 't' }));
        expect((refused as TaskLimitError).limit).toBe('stored_bytes');
        expect((await engine.get('o', unfetched.taskId)).status).toBe('completed');
        // Another owner is not held back by this one's bytes.
        await engine.create({ owner: 'p', request: padded, dialect: 't' });
      });

      it('at the total byte cap evicts any owner’s fetched tasks, then refuses everyone', async () => {
        const { engine, clock } = await open({ maxStoredBytesTotal: 8000 });
        const others = [await finish(engine, 'p', padded), await finish(engine, 'p', padded)];
        await engine.resultDelivered(others[0]!);
        await finish(engine, 'o', padded);
        // The total is re-read at most every second.
        clock.advance(TOTAL_BYTES_READ_MS);
        expect(await engine.store.storedBytes?.()).toBeGreaterThanOrEqual(8000);
        // At the cap: q's creation evicts p's fetched task rather than being refused.
        await engine.create({ owner: 'q', request: padded, dialect: 't' });
        await expect(engine.get('p', others[0]!.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
        let refused: unknown;
        for (let i = 0; i < 10 && !refused; i++) {
          clock.advance(TOTAL_BYTES_READ_MS);
          refused = await refusal(engine.create({ owner: 'q', request: padded, dialect: 't' }));
        }
        expect((refused as TaskLimitError).limit).toBe('total_bytes');
        expect((await engine.get('p', others[1]!.taskId)).status).toBe('completed');
      });
    });
  },
);
