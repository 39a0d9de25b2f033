import { afterEach, describe, expect, it, vi } from 'vitest';

import {
  TaskEngine,
  type InsertResult,
  type OwnerLimits,
  type TaskRecord,
  type TaskWork,
} from '../../src/engine/index.js';
import { InProcessExecutor } from '../../src/executors/in-process/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { callOf, gatedWork } from '../helpers/gatedWork.js';
import { eventually } from '../helpers/rawWire.js';

/** A memory store that can fail an insert, or act right after one has landed (before the creation goes on). */
class HookedStore extends MemoryStore {
  failNextInsert = false;
  afterInsert: ((record: TaskRecord) => Promise<void>) | undefined;

  override async insert(record: TaskRecord, limits?: OwnerLimits): Promise<InsertResult> {
    if (this.failNextInsert) {
      this.failNextInsert = false;
      throw new Error('the store is down');
    }
    const result = await super.insert(record, limits);
    const hook = this.afterInsert;
    this.afterInsert = undefined;
    if (result.inserted) await hook?.(record);
    return result;
  }
}

describe('a task created while the in-process executor has a slot free is claimed by its insert', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function setup(work: TaskWork, concurrency: number) {
    const store = new HookedStore();
    const engine = new TaskEngine({ store, sweepIntervalMs: 0, recoveryIntervalMs: 0 });
    const executor = new InProcessExecutor({ engine, work, concurrency });
    engine.setExecutor(executor);
    await engine.start();
    cleanups.push(async () => {
      await executor.close();
      await engine.close();
    });
    return { engine, executor, store };
  }

  it('is stored with its first attempt and runs on that record, with no write of its own before the outcome', async () => {
    const gated = gatedWork();
    const seen: TaskRecord[] = [];
    const { engine, executor } = await setup(async (context) => {
      seen.push(context.task);
      return gated.work(context);
    }, 2);
    const { task } = await engine.create({ owner: 'o', request: callOf('slow'), dialect: 't' });
    expect(task).toMatchObject({ attempts: 1, runner: executor.runnerId, version: 1 });
    expect(task.startedAt).toBe(task.createdAt);
    await eventually(() => gated.gates.has(task.taskId));
    // What the store holds while the work runs: the insert, untouched by a claim.
    expect(await engine.get('o', task.taskId)).toMatchObject({ attempts: 1, version: 1, status: 'working' });
    expect(seen[0]).toMatchObject({ taskId: task.taskId, version: 1, attempts: 1 });
    gated.release(task.taskId);
    const done = await engine.waitForTerminal(task.taskId);
    expect(done).toMatchObject({ status: 'completed', attempts: 1, version: 2 });
    // Derived from the stored writes: the insert (created, started) and the outcome, and the run's end beside them.
    await vi.waitFor(async () =>
      expect((await engine.timeline('o', task.taskId)).map((entry) => entry.kind)).toEqual([
        'created',
        'started',
        'status',
        'run_ended',
      ]),
    );
    expect((await engine.timeline('o', task.taskId))[1]).toMatchObject({ attempt: 1, runner: executor.runnerId });
  });

  it('is stored unclaimed when it has to wait for a slot, and claimed when its turn comes', async () => {
    const gated = gatedWork();
    const { engine } = await setup(gated.work, 1);
    const first = (await engine.create({ owner: 'o', request: callOf('slow'), dialect: 't' })).task;
    const second = (await engine.create({ owner: 'o', request: callOf('quick'), dialect: 't' })).task;
    expect(first.attempts).toBe(1);
    expect(second).toMatchObject({ attempts: 0, version: 1 });
    expect(second.startedAt).toBeUndefined();
    await eventually(() => gated.gates.has(first.taskId));
    gated.release(first.taskId);
    const done = await engine.waitForTerminal(second.taskId);
    // Its claim is a write of its own: version 2, the outcome 3.
    expect(done).toMatchObject({ status: 'completed', attempts: 1, version: 3 });
    await vi.waitFor(async () =>
      expect((await engine.timeline('o', second.taskId)).map((entry) => entry.kind)).toEqual([
        'created',
        'runner',
        'started',
        'status',
        'run_ended',
      ]),
    );
  });

  it('does not run work for a task cancelled between its insert and the start of its run', async () => {
    const gated = gatedWork();
    const { engine, store } = await setup(gated.work, 2);
    store.afterInsert = async (record) => {
      await engine.cancel('o', record.taskId);
    };
    const { task } = await engine.create({ owner: 'o', request: callOf('slow'), dialect: 't' });
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.status).toBe('cancelled');
    // The run heard the cancel its watch caught before the run's own observer was on: nothing is left running.
    await eventually(() => gated.gates.size === 0);
    const later = (await engine.create({ owner: 'o', request: callOf('quick'), dialect: 't' })).task;
    expect((await engine.waitForTerminal(later.taskId))?.status).toBe('completed');
  });

  it('gives the slot back when the insert fails, so the next task still finds it', async () => {
    const gated = gatedWork();
    const { engine, store, executor } = await setup(gated.work, 1);
    store.failNextInsert = true;
    // The failed insert gives its slot back; the creation tries again within its wait and succeeds.
    const first = await engine.create({ owner: 'o', request: callOf('quick'), dialect: 't' });
    expect(store.failNextInsert).toBe(false);
    expect((await engine.waitForTerminal(first.task.taskId))?.status).toBe('completed');
    // The run gives its slot back just after its outcome is stored.
    await vi.waitFor(() => expect(executor.load().running).toBe(0));
    const { task } = await engine.create({ owner: 'o', request: callOf('quick'), dialect: 't' });
    expect(task.attempts).toBe(1);
    expect((await engine.waitForTerminal(task.taskId))?.status).toBe('completed');
  });
});
