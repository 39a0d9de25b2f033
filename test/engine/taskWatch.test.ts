import { afterEach, describe, expect, it, vi } from 'vitest';

import {
  StaleLeaseError,
  SUSPENDED,
  TaskRunner,
  type TaskEngine,
  type TaskRecord,
  type TaskWork,
} from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { startEngine } from '../helpers/engines.js';
import { eventually } from '../helpers/rawWire.js';

const request = { method: 'tools/call', params: { name: 'x' } };

/** Work that waits until its run is aborted, and records why. */
function hangs(aborts: unknown[]): TaskWork {
  return ({ signal }) =>
    new Promise((_, reject) =>
      signal.addEventListener('abort', () => {
        aborts.push(signal.reason);
        reject(signal.reason as Error);
      }),
    );
}

/** A store whose events never arrive (a lost notification): only reads of the task tell what changed. */
function silent(): MemoryStore {
  const store = new MemoryStore();
  store.events.subscribe = () => () => {};
  return store;
}

/**
 * One runner claims one task twice (its first run still running): attempt 1, then attempt 2. Runs wait for their
 * abort and record its reason, except attempt 1 when `firstRun` is given: it does that instead.
 */
async function twoRuns(engines: TaskEngine[], store: MemoryStore, leaseMs: number, firstRun?: TaskWork) {
  const engine = await startEngine(store, { recheckIntervalMs: 3_600_000, leaseMs });
  engines.push(engine);
  const aborts = new Map<number, unknown>();
  const runner = new TaskRunner({
    engine,
    runnerId: 'runner-1',
    work: (context) =>
      firstRun && context.task.attempts === 1
        ? firstRun(context)
        : new Promise((_, reject) =>
            context.signal.addEventListener('abort', () => {
              aborts.set(context.task.attempts, context.signal.reason);
              reject(context.signal.reason as Error);
            }),
          ),
  });
  const { task } = await engine.create({ owner: 'o', request, dialect: 't', run: false });
  const first = runner.claimAndRun(task.taskId);
  await eventually(async () => (await engine.get('o', task.taskId)).attempts === 1);
  const second = runner.claimAndRun(task.taskId);
  await eventually(async () => (await engine.get('o', task.taskId)).attempts === 2);
  return { engine, runner, aborts, first, second, taskId: task.taskId };
}

// A run observes its task's events from its start; a change between the claim and that moment is caught by a watch
// begun before the claim (or, without one, by a read of the task as the run starts).
describe('TaskRunner: the claim watch', () => {
  const engines: TaskEngine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });

  async function claimed() {
    const store = new MemoryStore();
    const reads = vi.spyOn(store, 'get');
    const engine = await startEngine(store, { recheckIntervalMs: 3_600_000, leaseMs: 60_000 });
    engines.push(engine);
    const aborts: unknown[] = [];
    const runner = new TaskRunner({ engine, runnerId: 'runner-1', work: hangs(aborts) });
    // Not run by any executor: the test claims it.
    const { task } = await engine.create({ owner: 'o', request, dialect: 't', run: false });
    const watch = runner.watchClaim(task.taskId);
    const started = (await engine.markStarted(task.taskId, 'runner-1', 1, task)) as TaskRecord;
    expect(started.runner).toBe('runner-1');
    return { engine, runner, watch, started, aborts, reads: () => reads.mock.calls.length };
  }

  it('aborts the run for a cancel that landed between the claim and the run', async () => {
    const { engine, runner, watch, started, aborts } = await claimed();
    await engine.cancel('o', started.taskId);
    expect(watch.heardPast(started.version)).toBe(true);
    const end = await runner.run(started, new AbortController(), watch);
    expect(end.outcome).toBe('aborted');
    expect(String(aborts[0])).toMatch(/cancelled/);
  });

  it('starts the run without reading the task when nothing changed since the claim; the claim’s own change is no news', async () => {
    const { engine, runner, watch, started, aborts, reads } = await claimed();
    expect(watch.heardPast(started.version)).toBe(false);
    const controller = new AbortController();
    const before = reads();
    const running = runner.run(started, controller, watch);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reads() - before).toBe(0);
    // The watch is over once the run observes the task itself: later changes reach the run's own observer.
    await engine.cancel('o', started.taskId);
    expect(watch.heardPast(started.version)).toBe(false);
    expect((await running).outcome).toBe('aborted');
    expect(String(aborts[0])).toMatch(/cancelled/);
  });

  it('without a watch, reads the task once as the run starts', async () => {
    const { runner, watch, started, reads } = await claimed();
    watch.stop();
    const controller = new AbortController();
    const before = reads();
    const running = runner.run(started, controller);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reads() - before).toBe(1);
    controller.abort(new Error('test over'));
    expect((await running).outcome).toBe('aborted');
  });
});

// A wait for the next change reads the task as it starts, in case it changed since the caller's read; a watch begun
// before that read tells instead (tasks/result of 2025-11-25 keeps one for the whole request).
describe('TaskEngine.waitForChange with a watch', () => {
  const engines: TaskEngine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });

  async function read() {
    const store = new MemoryStore();
    const reads = vi.spyOn(store, 'get');
    const engine = await startEngine(store, { recheckIntervalMs: 3_600_000 });
    engines.push(engine);
    const { task } = await engine.create({ owner: 'o', request, dialect: 't', run: false });
    const watch = engine.watch(task.taskId);
    const seen = await engine.get('o', task.taskId);
    return { engine, watch, seen, reads: () => reads.mock.calls.length };
  }

  it('does not read at its start when nothing changed since the caller’s read, and wakes on the next change', async () => {
    const { engine, watch, seen, reads } = await read();
    const before = reads();
    const waiting = engine.waitForChange(seen.taskId, seen.version, undefined, watch);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reads() - before).toBe(0);
    await engine.setStatusMessage(seen.taskId, 'moving on');
    expect((await waiting)?.statusMessage).toBe('moving on');
    watch.stop();
  });

  it('resolves at once for a change that landed between the caller’s read and the wait', async () => {
    const { engine, watch, seen } = await read();
    await engine.setStatusMessage(seen.taskId, 'in between');
    expect(watch.heardPast(seen.version)).toBe(true);
    // Without the read at its start, this wait would sleep until the hour-long re-check.
    const next = await engine.waitForChange(seen.taskId, seen.version, undefined, watch);
    expect(next?.version).toBe(seen.version + 1);
    expect(next?.statusMessage).toBe('in between');
    watch.stop();
  });
});

// A run whose lease lapsed while it still ran (a stalled event loop) is re-run by the same runner's recovery: the
// first run must be aborted by the second's claim, though both are this runner's runs of one task.
describe('TaskRunner: two runs of one task in one runner', () => {
  const engines: TaskEngine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });

  it('aborts the earlier run when a later attempt claims the task, and keeps the later one', async () => {
    // Events arrive a little late, as over Redis or PostgreSQL: the later run is on its way before the earlier one
    // hears of its claim.
    const store = new MemoryStore();
    const subscribe = store.events.subscribe.bind(store.events);
    store.events.subscribe = (taskId, listener) =>
      subscribe(taskId, (change) => setTimeout(() => listener(change), 20));
    const { engine, aborts, runner, first, second, taskId } = await twoRuns(engines, store, 60_000);
    expect((await first)?.outcome).toBe('aborted');
    expect(String(aborts.get(1))).toMatch(/a later run \(attempt 2\) has taken the task over/);
    expect(aborts.has(2)).toBe(false);
    expect(runner.has(taskId)).toBe(true);
    await engine.cancel('o', taskId);
    expect((await second)?.outcome).toBe('aborted');
    expect(String(aborts.get(2))).toMatch(/cancelled/);
  });
});

// With no event heard at all (a lost notification), only the lease ticks' re-reads find that a run was superseded,
// and a shutdown's hand-back must reach every run: both see all of a runner's runs, two of one task included.
describe('TaskRunner: a superseded run of its own, events lost', () => {
  const engines: TaskEngine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });

  it('a lease tick aborts the earlier run, not the later one', async () => {
    const { runner, aborts, first, second } = await twoRuns(engines, silent(), 300);
    runner.start();
    try {
      expect((await first)?.outcome).toBe('aborted');
      expect(String(aborts.get(1))).toMatch(/a later run \(attempt 2\) has taken the task over/);
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(aborts.has(2)).toBe(false);
      expect(runner.taskIds).toHaveLength(1);
    } finally {
      runner.stop();
      runner.handBackAll('test over');
    }
    expect((await second)?.outcome).toBe('handed-back');
  });

  it('records nothing from the earlier run that writes before it hears of the later claim: no status, no outcome', async () => {
    let finishFirst = () => {};
    const firstMayFinish = new Promise<void>((resolve) => (finishFirst = resolve));
    const { engine, runner, second, first, taskId } = await twoRuns(
      engines,
      silent(),
      60_000,
      async ({ setStatusMessage }) => {
        await firstMayFinish;
        await setStatusMessage('from attempt 1');
        return { kind: 'result', result: { from: 'attempt 1' } };
      },
    );
    finishFirst();
    await first;
    const after = await engine.get('o', taskId);
    expect(after.status).toBe('working');
    expect(after.outcome).toBeUndefined();
    expect(after.statusMessage).not.toBe('from attempt 1');
    runner.handBackAll('test over');
    expect((await second)?.outcome).toBe('handed-back');
  });

  it('refuses the earlier run’s question with StaleLeaseError; the task asks nothing', async () => {
    let askNow = () => {};
    const mayAsk = new Promise<void>((resolve) => (askNow = resolve));
    const refusals: unknown[] = [];
    const { engine, runner, second, first, taskId } = await twoRuns(
      engines,
      silent(),
      60_000,
      async ({ requestInput }) => {
        await mayAsk;
        await requestInput({ method: 'elicitation/create', params: {} }).catch((error: unknown) => {
          refusals.push(error);
          throw error;
        });
        return { kind: 'result', result: {} };
      },
    );
    askNow();
    await first;
    expect(refusals[0]).toBeInstanceOf(StaleLeaseError);
    const after = await engine.get('o', taskId);
    expect(after.status).toBe('working');
    expect(after.inputRequests).toEqual({});
    expect(after.outcome).toBeUndefined();
    runner.handBackAll('test over');
    expect((await second)?.outcome).toBe('handed-back');
  });

  it('a hand-back reaches both runs', async () => {
    const { runner, first, second, taskId } = await twoRuns(engines, silent(), 300);
    expect(runner.taskIds).toEqual([taskId]);
    runner.handBackAll('shutting down');
    expect((await first)?.outcome).toBe('handed-back');
    expect((await second)?.outcome).toBe('handed-back');
    expect(runner.has(taskId)).toBe(false);
  });
});

// A later attempt that suspends itself gives its lease up, which for that run is no takeover; for the run it
// superseded it is one, or that run's outcome would land over the parked task.
describe('TaskRunner: a superseded run, the later attempt parked', () => {
  const engines: TaskEngine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });

  it('aborts the earlier run once the later one has suspended, and its outcome is not recorded', async () => {
    const engine = await startEngine(silent(), { recheckIntervalMs: 3_600_000, leaseMs: 300 });
    engines.push(engine);
    let finishFirst = () => {};
    const firstMayFinish = new Promise<void>((resolve) => (finishFirst = resolve));
    const aborts = new Map<number, unknown>();
    const runner = new TaskRunner({
      engine,
      runnerId: 'runner-1',
      work: async ({ task, signal, suspend }) => {
        signal.addEventListener('abort', () => aborts.set(task.attempts, signal.reason));
        if (task.attempts === 1) {
          // Stalled: it ignores its signal and returns late.
          await firstMayFinish;
          return { kind: 'result', result: { from: 'attempt 1' } };
        }
        await suspend([{ method: 'elicitation/create', params: {} }], () => ({}));
        return SUSPENDED;
      },
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't', run: false });
    const first = runner.claimAndRun(task.taskId);
    await eventually(async () => (await engine.get('o', task.taskId)).attempts === 1);
    expect((await runner.claimAndRun(task.taskId))?.reason).toBe('suspended for input');
    runner.start();
    try {
      await eventually(() => aborts.has(1));
      expect(String(aborts.get(1))).toMatch(/a later run \(attempt 2\) has taken the task over/);
      finishFirst();
      expect((await first)?.outcome).toBe('aborted');
      const parked = await engine.get('o', task.taskId);
      expect(parked.status).toBe('input_required');
      expect(parked.suspended).toBeTruthy();
      expect(aborts.has(2)).toBe(false);
    } finally {
      finishFirst();
      runner.stop();
    }
  });
});
