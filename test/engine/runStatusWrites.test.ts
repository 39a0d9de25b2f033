// A run's own reports on their way to the store (RunStatusWrites): the first ones are held FIRST_REPORT_HOLD_MS, so a
// run that ends within it writes its last report with its outcome only; a longer run's report is stored within the
// hold; reports never race the outcome's compare-and-set; the run's end goes on the timeline with the outcome.
import { afterEach, describe, expect, it, vi } from 'vitest';

import { TaskEngine, type TaskWork } from '../../src/engine/index.js';
import { InProcessExecutor } from '../../src/executors/in-process/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';

const request = { method: 'tools/call', params: { name: 'x' } };

describe('a run’s status writes', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function setup(work: TaskWork) {
    const store = new MemoryStore();
    const engine = new TaskEngine({ store, sweepIntervalMs: 0, recoveryIntervalMs: 0 });
    const executor = new InProcessExecutor({ engine, work, concurrency: 2 });
    engine.setExecutor(executor);
    await engine.start();
    cleanups.push(async () => {
      await executor.close();
      await engine.close();
    });
    return { engine, store };
  }

  it('writes a short run’s report with its outcome only, and its end in the same write', async () => {
    let claimedVersion = 0;
    const { engine } = await setup(async (context) => {
      claimedVersion = context.task.version;
      void context.reportProgress?.({ progress: 1, total: 2, message: 'half' });
      return { kind: 'result', result: { ok: true } };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    const done = await engine.waitForTerminal(task.taskId);
    // The claim's version, then one write: the outcome, carrying the report (no progress write before it).
    expect(done?.version).toBe(claimedVersion + 1);
    expect(done?.progress).toMatchObject({ progress: 1, total: 2, message: 'half' });
    const timeline = await engine.timeline('o', task.taskId);
    expect(timeline.at(-1)).toMatchObject({ kind: 'run_ended', ran: 'finished', attempt: 1 });
    expect(timeline.filter((entry) => entry.kind === 'run_ended')).toHaveLength(1);
  });

  it('stores a longer run’s first report within a second, and later ones at once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { engine, store } = await setup(async (context) => {
      await context.reportProgress?.({ progress: 1, message: 'first' });
      await gate;
      await context.reportProgress?.({ progress: 2, message: 'second' });
      return { kind: 'result', result: { ok: true } };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    try {
      await vi.waitFor(async () => expect((await store.get(task.taskId))?.progress?.progress).toBe(1), {
        timeout: 1000,
        interval: 10,
      });
    } finally {
      release();
    }
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.progress).toMatchObject({ progress: 2, message: 'second' });
    expect(done?.status).toBe('completed');
  });
});
