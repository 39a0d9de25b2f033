// How a run ended, on the task's timeline and the lifecycle hook: finished, parked, or told to stop (with how long
// its work took to stop), and a flag for a run that ignores the abort past the grace period.
import { afterEach, describe, expect, it, vi } from 'vitest';

import { TaskEngine, type TaskLifecycleEvent, type TaskWork, type TimelineEntry } from '../../src/engine/index.js';
import { InProcessExecutor } from '../../src/executors/in-process/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';

const request = { method: 'tools/call', params: { name: 'x' } };

describe('a run’s end on the timeline', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function setup(work: TaskWork, abortGraceMs?: number) {
    const events: TaskLifecycleEvent[] = [];
    const store = new MemoryStore();
    const engine = new TaskEngine({
      store,
      sweepIntervalMs: 0,
      recoveryIntervalMs: 0,
      ...(abortGraceMs === undefined ? {} : { abortGraceMs }),
      onLifecycle: (event) => events.push(event),
    });
    const executor = new InProcessExecutor({ engine, work, concurrency: 2 });
    engine.setExecutor(executor);
    await engine.start();
    cleanups.push(async () => {
      await executor.close();
      await engine.close();
    });
    return { engine, events, store };
  }

  const runEnds = (timeline: TimelineEntry[]) =>
    timeline.filter((e) => e.kind === 'run_ended' || e.kind === 'run_overdue');

  it('records a run that finished on its own', async () => {
    const { engine } = await setup(async () => ({ kind: 'result', result: { ok: true } }));
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await engine.waitForTerminal(task.taskId);
    await vi.waitFor(async () => expect(runEnds(await engine.timeline('o', task.taskId))).toHaveLength(1));
    expect(runEnds(await engine.timeline('o', task.taskId))).toEqual([
      expect.objectContaining({ kind: 'run_ended', ran: 'finished', attempt: 1 }),
    ]);
  });

  it('records how long a cancelled run took to stop, and reports it on the lifecycle hook', async () => {
    const { engine, events } = await setup(
      ({ signal }) =>
        new Promise((_, reject) =>
          // The work stops 50 ms after it is told to.
          signal.addEventListener('abort', () => setTimeout(() => reject(signal.reason), 50), { once: true }),
        ),
    );
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await vi.waitFor(async () => expect((await engine.get('o', task.taskId)).attempts).toBe(1));
    await engine.cancel('o', task.taskId);
    await vi.waitFor(async () => expect(runEnds(await engine.timeline('o', task.taskId))).toHaveLength(1));
    const [ended] = runEnds(await engine.timeline('o', task.taskId));
    expect(ended).toMatchObject({ kind: 'run_ended', ran: 'aborted', attempt: 1 });
    expect(ended?.stopMs).toBeGreaterThanOrEqual(45);
    const stopped = events.find((e) => e.type === 'run_stopped');
    expect(stopped).toMatchObject({ type: 'run_stopped', task: { taskId: task.taskId } });
    expect(stopped && 'stopMs' in stopped ? stopped.stopMs : -1).toBeGreaterThanOrEqual(45);
  });

  it('flags a run that ignores the abort past the grace period, then records its end', async () => {
    let release: () => void = () => {};
    const { engine, events } = await setup(
      // Ignores the signal: returns only when the test lets it.
      () => new Promise((resolve) => (release = () => resolve({ kind: 'result', result: {} }))),
      100,
    );
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await vi.waitFor(async () => expect((await engine.get('o', task.taskId)).attempts).toBe(1));
    await engine.cancel('o', task.taskId);
    await vi.waitFor(async () =>
      expect(runEnds(await engine.timeline('o', task.taskId))).toEqual([
        expect.objectContaining({ kind: 'run_overdue', graceMs: 100 }),
      ]),
    );
    expect(events.some((e) => e.type === 'run_overdue' && e.task.taskId === task.taskId)).toBe(true);
    release();
    await vi.waitFor(async () => expect(runEnds(await engine.timeline('o', task.taskId))).toHaveLength(2));
    expect(runEnds(await engine.timeline('o', task.taskId))[1]).toMatchObject({ kind: 'run_ended', ran: 'aborted' });
  });

  it('records nothing for a run whose task was deleted', async () => {
    let started = false;
    let stopped = false;
    const { engine, store } = await setup(
      ({ signal }) =>
        new Promise((_, reject) => {
          started = true;
          signal.addEventListener(
            'abort',
            () =>
              setTimeout(() => {
                stopped = true;
                reject(signal.reason);
              }, 20),
            { once: true },
          );
        }),
    );
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await vi.waitFor(async () => expect(started).toBe(true));
    await engine.delete('o', task.taskId);
    await vi.waitFor(async () => expect(stopped).toBe(true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // No entry written after the task went: its timeline went with it and stays gone.
    expect(await store.timeline.read(task.taskId)).toEqual([]);
  });
});
