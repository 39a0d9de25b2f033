import { afterEach, describe, expect, it } from 'vitest';

import { StoreUnavailableError, type TaskEngine, type TaskRecord } from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { ManualClock, startEngine } from '../helpers/engines.js';
import { switchable } from '../helpers/switchableStore.js';

const request = { method: 'tools/call', params: { name: 'work', arguments: {} } };

describe('lease recovery after a store outage', () => {
  const engines: TaskEngine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });

  it('does not take a live runner for dead because the store was: its outcome lands once the store is back', async () => {
    const clock = new ManualClock();
    const { store, setDown } = switchable(new MemoryStore());
    const executor = {
      runnerId: 'runner-1',
      leasesOnCreate: true,
      submit: async (_task: TaskRecord) => {},
      close: async () => {},
    };
    const engine = await startEngine(store, { clock, executor, leaseMs: 3000 });
    engines.push(engine);
    const task = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
    const claimed = await engine.markStarted(task.taskId, 'runner-1');
    expect(claimed?.attempts).toBe(1);

    // The store is gone for longer than a lease: the runner cannot renew, and recovery cannot scan.
    setDown(true);
    await expect(engine.renewLeases('runner-1')).rejects.toBeInstanceOf(StoreUnavailableError);
    clock.advance(4000);
    await expect(engine.recover()).rejects.toBeInstanceOf(StoreUnavailableError);
    setDown(false);

    // Back: the lease has lapsed, but only because nobody could write; recovery waits a lease for the runner.
    expect(await engine.recover()).toEqual({ failed: 0, rerun: 0 });
    clock.advance(1000);
    expect(await engine.recover()).toEqual({ failed: 0, rerun: 0 });
    // The runner, retrying, records the outcome its tool returned during the outage.
    const outcome = { kind: 'result' as const, result: { content: [{ type: 'text', text: 'done' }] } };
    expect(await engine.complete(task.taskId, outcome, undefined, undefined, 1)).toBe(true);
    expect((await engine.get('o', task.taskId)).status).toBe('completed');
  });

  it('still recovers a runner that stays silent a whole lease after the store came back', async () => {
    const clock = new ManualClock();
    const { store, setDown } = switchable(new MemoryStore());
    const executor = {
      runnerId: 'runner-1',
      leasesOnCreate: true,
      submit: async (_task: TaskRecord) => {},
      close: async () => {},
    };
    const engine = await startEngine(store, { clock, executor, leaseMs: 3000 });
    engines.push(engine);
    const task = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
    await engine.markStarted(task.taskId, 'runner-1');
    setDown(true);
    clock.advance(4000);
    await expect(engine.recover()).rejects.toBeInstanceOf(StoreUnavailableError);
    setDown(false);
    expect(await engine.recover()).toEqual({ failed: 0, rerun: 0 });
    // A lease of steady store without a renewal: the runner is gone.
    clock.advance(3000);
    expect(await engine.recover()).toEqual({ failed: 1, rerun: 0 });
    expect((await engine.get('o', task.taskId)).recovery).toBe('failed-after-crash');
  });

  it('does not act on a scan that waited out the outage itself (its answer came slowly, as the store returned)', async () => {
    const clock = new ManualClock();
    const memory = new MemoryStore();
    let waiting = false;
    // A scan held while the store was away, answered when it came back: the clock moves on meanwhile.
    const store = new Proxy(memory, {
      get(target, key, receiver) {
        const value: unknown = Reflect.get(target, key, receiver);
        if (key !== 'findStale' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (waiting) clock.advance(2000);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const executor = {
      runnerId: 'runner-1',
      leasesOnCreate: true,
      submit: async (_task: TaskRecord) => {},
      close: async () => {},
    };
    const engine = await startEngine(store, { clock, executor, leaseMs: 3000 });
    engines.push(engine);
    const task = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
    await engine.markStarted(task.taskId, 'runner-1');
    clock.advance(4000);
    waiting = true;
    expect(await engine.recover()).toEqual({ failed: 0, rerun: 0 });
    expect((await engine.get('o', task.taskId)).status).toBe('working');
  });
});
