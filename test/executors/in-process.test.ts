import { afterEach, describe, expect, it } from 'vitest';

import {
  isTerminal,
  TaskEngine,
  TaskRunAbortedError,
  type Clock,
  type TaskEngineOptions,
  type TaskWork,
} from '../../src/engine/index.js';
import { InProcessExecutor, type InProcessExecutorOptions } from '../../src/executors/in-process/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { allTerminal, callOf, gatedWork } from '../helpers/gatedWork.js';
import { eventually } from '../helpers/rawWire.js';

const request = { method: 'tools/call', params: { name: 'x' } };

describe('InProcessExecutor', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function setup(
    work: TaskWork,
    concurrency = 4,
    options: Omit<InProcessExecutorOptions, 'engine' | 'work' | 'concurrency'> = {},
    engineOptions: Partial<TaskEngineOptions> = {},
  ) {
    const engine = new TaskEngine({
      store: new MemoryStore(),
      sweepIntervalMs: 0,
      recoveryIntervalMs: 0,
      ...engineOptions,
    });
    const executor = new InProcessExecutor({ engine, work, concurrency, ...options });
    engine.setExecutor(executor);
    await engine.start();
    cleanups.push(async () => {
      await executor.close();
      await engine.close();
    });
    return { engine, executor };
  }

  it('runs the work and stores its outcome', async () => {
    const { engine } = await setup(async ({ task }) => ({ kind: 'result', result: { echoed: task.request.params } }));
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.status).toBe('completed');
    expect(done?.outcome).toEqual({ kind: 'result', result: { echoed: { name: 'x' } } });
    expect(done?.attempts).toBe(1);
  });

  it('aborts the running work when the task is cancelled', async () => {
    let aborted: unknown;
    const { engine } = await setup(
      ({ signal }) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = signal.reason;
            reject(signal.reason);
          }),
        ),
    );
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await waitFor(async () => (await engine.get('o', task.taskId)).attempts === 1);
    await engine.cancel('o', task.taskId);
    await waitFor(() => aborted !== undefined);
    expect(String(aborted)).toContain('cancelled');
    expect((await engine.get('o', task.taskId)).status).toBe('cancelled');
  });

  it('fails the task with the thrown message when the work throws', async () => {
    const { engine } = await setup(async () => {
      throw new Error('disk on fire');
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.status).toBe('failed');
    expect(done?.statusMessage).toContain('disk on fire');
    expect(done?.outcome).toEqual({ kind: 'error', error: { code: -32603, message: 'disk on fire' } });
  });

  it('respects the concurrency limit and runs queued tasks in order', async () => {
    const releases: Array<() => void> = [];
    const started: string[] = [];
    const { engine, executor } = await setup(
      ({ task }) => {
        started.push(task.taskId);
        return new Promise((resolve) => releases.push(() => resolve({ kind: 'result', result: {} })));
      },
      2,
      { maxRunningPerOwner: 2 },
    );
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await engine.create({ owner: 'o', request, dialect: 't' })).task.taskId);
    await waitFor(() => started.length === 2);
    expect(executor.activeCount).toBe(2);
    expect(executor.queuedCount).toBe(3);
    while (started.length < 5 || releases.length > 0) {
      releases.shift()?.();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(started).toEqual(ids);
    for (const id of ids) expect((await engine.waitForTerminal(id))?.status).toBe('completed');
  });

  it('routes input requests through the task and resumes the work with the answer', async () => {
    const { engine } = await setup(async ({ requestInput }) => {
      const answer = await requestInput({ method: 'elicitation/create', params: { message: 'Proceed?' } });
      return { kind: 'result', result: { got: answer } };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await waitFor(async () => (await engine.get('o', task.taskId)).status === 'input_required');
    const waiting = await engine.get('o', task.taskId);
    const [key] = Object.keys(waiting.inputRequests);
    expect(waiting.inputRequests[key as string]?.params).toEqual({ message: 'Proceed?' });
    await engine.answerInput('o', task.taskId, { [key as string]: { result: { action: 'accept' } } });
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.outcome).toEqual({ kind: 'result', result: { got: { result: { action: 'accept' } } } });
  });

  it('cancelling while input_required aborts the waiting work and drops the request', async () => {
    let aborted = false;
    const { engine } = await setup(async ({ requestInput, signal }) => {
      signal.addEventListener('abort', () => (aborted = true));
      await requestInput({ method: 'elicitation/create', params: { message: 'Name?' } });
      return { kind: 'result', result: {} };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await waitFor(async () => (await engine.get('o', task.taskId)).status === 'input_required');
    const cancelled = await engine.cancel('o', task.taskId);
    expect(cancelled.inputRequests).toEqual({});
    await waitFor(() => aborted);
    expect((await engine.get('o', task.taskId)).status).toBe('cancelled');
  });

  // Fair sharing of the slots across owners, and per-tool concurrency limits.

  it("one owner's 16 long tasks do not keep another owner's quick task from running", async () => {
    const gated = gatedWork();
    const { engine, executor } = await setup(gated.work, 16);
    const long = new Map<string, string>();
    for (let i = 0; i < 16; i++) {
      const { task } = await engine.create({ owner: 'alice', request: callOf('long'), dialect: 't' });
      long.set(task.taskId, 'alice');
    }
    await eventually(() => gated.started.length === 12);
    // alice holds her share (three quarters of the slots); the rest waits in her own queue.
    expect(executor.activeCount).toBe(12);
    expect(executor.queuedCount).toBe(4);
    const { task: quick } = await engine.create({ owner: 'bob', request: callOf('quick'), dialect: 't' });
    expect((await engine.waitForTerminal(quick.taskId))?.status).toBe('completed');
    // bob's task finished while every one of alice's was still unfinished.
    for (const id of long.keys()) expect(isTerminal((await engine.get('alice', id)).status)).toBe(false);
    await eventually(async () => {
      gated.releaseAll();
      return allTerminal(engine, long);
    });
    for (const id of long.keys()) expect((await engine.get('alice', id)).status).toBe('completed');
  });

  it('gives a free slot to the waiting owner with the fewest running tasks, round-robin on ties', async () => {
    const gated = gatedWork();
    const { engine } = await setup(gated.work, 2, { maxRunningPerOwner: 2 });
    const names = new Map<string, string>();
    const create = async (owner: string, label: string) => {
      const { task } = await engine.create({ owner, request: callOf('long'), dialect: 't' });
      names.set(task.taskId, label);
    };
    for (let i = 1; i <= 5; i++) await create('alice', `a${i}`);
    await eventually(() => gated.started.length === 2);
    await create('bob', 'b1');
    await create('bob', 'b2');
    // Each time, release the earliest-started task still running and wait for the next start.
    for (let starts = 3; starts <= 7; starts++) {
      gated.release(gated.started.find((id) => gated.gates.has(id)) as string);
      await eventually(() => gated.started.length === starts);
    }
    expect(gated.started.map((id) => names.get(id))).toEqual(['a1', 'a2', 'b1', 'a3', 'b2', 'a4', 'a5']);
    gated.releaseAll();
  });

  it('keeps that order with many owners waiting at once, as a plain model of the rule does', async () => {
    const gated = gatedWork();
    const { engine } = await setup(gated.work, 3, { maxRunningPerOwner: 2 });
    // The model: queues per owner, owners least recently served first, a slot to the fewest running (earliest on ties).
    const model = { running: new Map<string, number>(), queues: new Map<string, string[]>(), order: [] as string[] };
    const started: string[] = [];
    const runningNow: string[] = [];
    const pump = () => {
      while (runningNow.length < 3) {
        let best: string | undefined;
        for (const owner of model.order) {
          const running = model.running.get(owner) ?? 0;
          if (running >= 2 || (best !== undefined && running >= (model.running.get(best) ?? 0))) continue;
          best = owner;
        }
        if (best === undefined) return;
        const queue = model.queues.get(best) as string[];
        const label = queue.shift() as string;
        model.order.splice(model.order.indexOf(best), 1);
        if (queue.length > 0) model.order.push(best);
        else model.queues.delete(best);
        model.running.set(best, (model.running.get(best) ?? 0) + 1);
        started.push(label);
        runningNow.push(label);
      }
    };
    const labels = new Map<string, string>();
    const submissions = [
      'a',
      'a',
      'a',
      'a',
      ...Array.from({ length: 60 }, (_, i) => [`o${i}`, `o${i}`]).flat(),
      'a',
      'o0',
      // Two owners with backlogs and a third with little: slots then fall free with owners tied at one task running.
      ...Array.from({ length: 8 }, () => ['p', 'q']).flat(),
      'r',
      'r',
      'r',
    ];
    for (const [i, owner] of submissions.entries()) {
      const label = `${owner}#${i}`;
      const { task } = await engine.create({ owner, request: callOf('long'), dialect: 't' });
      labels.set(task.taskId, label);
      if (!model.queues.has(owner)) {
        model.queues.set(owner, []);
        model.order.push(owner);
      }
      model.queues.get(owner)?.push(label);
      pump();
      await eventually(() => gated.started.length === started.length);
    }
    while (runningNow.length > 0) {
      const done = runningNow.shift() as string;
      const owner = done.split('#')[0] as string;
      model.running.set(owner, (model.running.get(owner) as number) - 1);
      pump();
      gated.release(gated.started.find((id) => labels.get(id) === done) as string);
      await eventually(() => gated.started.length === started.length);
    }
    expect(gated.started.map((id) => labels.get(id))).toEqual(started);
    expect(started.length).toBe(submissions.length);
  });

  it('never runs more tasks of a tool than its concurrency limit, and other tools pass it', async () => {
    const gated = gatedWork();
    const { engine } = await setup(gated.work, 8, { toolConcurrency: { long: 2 } });
    const tasks = new Map<string, string>();
    for (const owner of ['alice', 'bob', 'carol']) {
      for (let i = 0; i < 3; i++) {
        const { task } = await engine.create({ owner, request: callOf('long'), dialect: 't' });
        tasks.set(task.taskId, owner);
      }
    }
    await eventually(() => gated.gates.size === 2);
    // A task of another tool, submitted after all of them, runs at once.
    const { task: quick } = await engine.create({ owner: 'alice', request: callOf('quick'), dialect: 't' });
    expect((await engine.waitForTerminal(quick.taskId))?.status).toBe('completed');
    expect(gated.gates.size).toBe(2);
    await eventually(async () => {
      gated.releaseAll();
      return allTerminal(engine, tasks);
    });
    expect(gated.started.length).toBe(10);
    expect(gated.peak.get('long')).toBe(2);
  });

  // Takeover: the executor runs through the engine's run path (TaskRunner), which aborts a run once the task is no
  // longer that run's. Leases are long here, so no renewal tick falls inside a test and only the test moves them.

  /** Work whose first run waits until it is aborted (and records why); later runs finish at once. */
  function firstRunHangs(aborts: unknown[]): TaskWork {
    return ({ task, signal }) => {
      if (task.attempts > 1) return Promise.resolve({ kind: 'result', result: { attempt: task.attempts } });
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => {
          aborts.push(signal.reason);
          // A superseded run that still returns must not have its outcome recorded.
          resolve({ kind: 'result', result: { stale: true } });
        }),
      );
    };
  }

  it('counts and, at close, aborts a re-run whose superseded run of the same task has ended', async () => {
    let offset = 0;
    const clock: Clock = { now: () => Date.now() + offset };
    const aborts = new Map<number, unknown>();
    const { engine, executor } = await setup(
      ({ task, signal }) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            aborts.set(task.attempts, signal.reason);
            resolve({ kind: 'result', result: {} });
          }),
        ),
      4,
      {},
      { leaseMs: 60_000, clock },
    );
    const { task } = await engine.create({ owner: 'o', request, dialect: 't', retrySafe: true });
    await eventually(async () => (await engine.get('o', task.taskId)).attempts === 1);
    offset = 120_000;
    expect(await engine.recover()).toEqual({ failed: 0, rerun: 1 });
    await eventually(() => aborts.has(1));
    // The superseded run has ended; the re-run holds its slot until it is aborted.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(executor.activeCount).toBe(1);
    await executor.close();
    expect(String(aborts.get(2))).toMatch(/shutting down/);
  });

  it('aborts the run when another runner claims the task, and records none of its outcome', async () => {
    const aborts: unknown[] = [];
    const { engine, executor } = await setup(firstRunHangs(aborts), 4, {}, { leaseMs: 60_000 });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await eventually(async () => (await engine.get('o', task.taskId)).attempts === 1);
    const taken = await engine.markStarted(task.taskId, 'in-process:elsewhere');
    expect(taken?.runner).toBe('in-process:elsewhere');
    await eventually(() => aborts.length === 1);
    expect(aborts[0]).toBeInstanceOf(TaskRunAbortedError);
    expect(String(aborts[0])).toMatch(/another runner has taken the task over/);
    await eventually(() => executor.activeCount === 0);
    const after = await engine.get('o', task.taskId);
    expect(after.status).toBe('working');
    expect(after.outcome).toBeUndefined();
    expect(after.runner).toBe('in-process:elsewhere');
  });

  it('aborts the run superseded by a re-run after its lease lapsed; only the re-run records an outcome', async () => {
    let offset = 0;
    const clock: Clock = { now: () => Date.now() + offset };
    const aborts: unknown[] = [];
    const { engine, executor } = await setup(firstRunHangs(aborts), 4, {}, { leaseMs: 60_000, clock });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't', retrySafe: true });
    await eventually(async () => (await engine.get('o', task.taskId)).attempts === 1);
    // The lease runs out (as when this process stalled past it): recovery re-runs the task on the same runner.
    offset = 120_000;
    expect(await engine.recover()).toEqual({ failed: 0, rerun: 1 });
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.status).toBe('completed');
    expect(done?.attempts).toBe(2);
    expect(done?.recovery).toBe('rerun-after-crash');
    expect(done?.outcome).toEqual({ kind: 'result', result: { attempt: 2 } });
    await eventually(() => aborts.length === 1);
    expect(String(aborts[0])).toMatch(/a later run \(attempt 2\) has taken the task over/);
    await eventually(() => executor.activeCount === 0);
    expect((await engine.get('o', task.taskId)).outcome).toEqual({ kind: 'result', result: { attempt: 2 } });
  });

  it('keeps a run that suspended itself for input: giving the lease up is not a takeover', async () => {
    const aborts: unknown[] = [];
    const { engine, executor } = await setup(
      async ({ task, signal, suspend }) => {
        signal.addEventListener('abort', () => aborts.push(signal.reason));
        if (task.meta['asked']) return { kind: 'result', result: { resumed: true } };
        await suspend([{ method: 'elicitation/create', params: { message: 'Go?' } }], () => ({ asked: true }));
        // Still inside the run while the task is parked without a runner.
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { kind: 'suspended' };
      },
      4,
      {},
      { leaseMs: 60_000 },
    );
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await eventually(async () => (await engine.get('o', task.taskId)).suspended === true);
    await eventually(() => executor.activeCount === 0);
    const parked = await engine.get('o', task.taskId);
    const [key] = Object.keys(parked.inputRequests);
    await engine.answerInput('o', task.taskId, { [key as string]: { result: { action: 'accept' } } });
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.outcome).toEqual({ kind: 'result', result: { resumed: true } });
    expect(aborts).toEqual([]);
  });
});

async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
