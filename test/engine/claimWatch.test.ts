import { afterEach, describe, expect, it, vi } from 'vitest';

import { TaskRunner, type TaskEngine, type TaskRecord, type TaskWork } from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { startEngine } from '../helpers/engines.js';

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
