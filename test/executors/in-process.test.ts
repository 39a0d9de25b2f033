import { afterEach, describe, expect, it } from 'vitest';

import { isTerminal, TaskEngine, type TaskWork } from '../../src/engine/index.js';
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
  ) {
    const engine = new TaskEngine({ store: new MemoryStore(), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
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
});

async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
