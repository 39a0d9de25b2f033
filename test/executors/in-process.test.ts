import { afterEach, describe, expect, it } from 'vitest';

import { TaskEngine, type TaskWork } from '../../src/engine/index.js';
import { InProcessExecutor } from '../../src/executors/in-process/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';

const request = { method: 'tools/call', params: { name: 'x' } };

describe('InProcessExecutor', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function setup(work: TaskWork, concurrency = 4) {
    const engine = new TaskEngine({ store: new MemoryStore(), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
    const executor = new InProcessExecutor({ engine, work, concurrency });
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
    const { engine, executor } = await setup(({ task }) => {
      started.push(task.taskId);
      return new Promise((resolve) => releases.push(() => resolve({ kind: 'result', result: {} })));
    }, 2);
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
});

async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
