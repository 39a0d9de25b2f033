import { join } from 'node:path';

import type { ServerContext } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';

import { TaskEngine, type TaskStore, type TaskWork } from '../../src/engine/index.js';
import { InProcessExecutor } from '../../src/executors/in-process/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import {
  NonRetryableError,
  journaledWork,
  parseDuration,
  withSteps,
  type WorkflowHandler,
  type WorkflowOptions,
} from '../../src/workflow/index.js';
import { tempDir } from '../helpers/tmp.js';

const request = { method: 'tools/call', params: { name: 'wf', arguments: {} } };

/**
 * The work of a task whose tool is `handler`: called as the internal call would call it, inside the run's work, with
 * the request's `_meta` and the run's signal.
 */
function toolWork(handler: WorkflowHandler<Record<string, unknown>>, options: WorkflowOptions = {}): TaskWork {
  const tool = withSteps(handler, options);
  return async ({ task, signal }) => {
    const params = task.request.params as { arguments: Record<string, unknown>; _meta: Record<string, unknown> };
    const ctx = { mcpReq: { _meta: params._meta, signal } } as unknown as ServerContext;
    return { kind: 'result', result: (await tool(params.arguments, ctx)) as Record<string, unknown> };
  };
}

describe('the journaled step API on the engine', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(
    handler: WorkflowHandler<Record<string, unknown>>,
    store: TaskStore = new MemoryStore(),
    options: WorkflowOptions = {},
  ) {
    const engine = new TaskEngine({ store, sweepIntervalMs: 0, recoveryIntervalMs: 0, wakeIntervalMs: 200 });
    const executor = new InProcessExecutor({ engine, work: journaledWork(engine, toolWork(handler, options)) });
    engine.setExecutor(executor);
    await engine.start();
    cleanups.push(async () => {
      await executor.close();
      await engine.close();
    });
    return { engine, executor };
  }

  it('parses durations as the official package does', () => {
    expect(parseDuration(250)).toBe(250);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1.5 hours')).toBe(5_400_000);
    expect(parseDuration('30s')).toBe(30_000);
    expect(() => parseDuration('soon')).toThrow(TypeError);
  });

  it('retries a failing step with growing waits during which the task holds nothing', async () => {
    const attempts: number[] = [];
    const { engine } = await setup(async (_args, step) => {
      const value = await step.do('flaky', { retries: { limit: 4, baseDelayMs: 120, maxDelayMs: 10_000 } }, () => {
        attempts.push(Date.now());
        if (attempts.length < 4) throw new Error(`transient ${attempts.length}`);
        return 'ok';
      });
      return { content: [{ type: 'text', text: value }] };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    // Between attempts: parked, no runner, no lease.
    const parked = await waitFor(engine, task.taskId, (record) => record.suspended === true);
    expect(parked.status).toBe('working');
    expect(parked.runner).toBeUndefined();
    expect(parked.leaseUntil).toBeUndefined();
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.outcome).toEqual({ kind: 'result', result: { content: [{ type: 'text', text: 'ok' }] } });
    expect(attempts).toHaveLength(4);
    const gaps = attempts.slice(1).map((at, i) => at - (attempts[i] as number));
    // Jittered into [50 %, 100 %] of 120, 240, 480 ms. A busy machine only lengthens a gap, so only the least waits
    // are checked: the third's (240 ms) is past the most the first may be (120 ms), so they grow.
    expect(gaps[0]).toBeGreaterThanOrEqual(55);
    expect(gaps[1]).toBeGreaterThanOrEqual(115);
    expect(gaps[2]).toBeGreaterThanOrEqual(235);
  });

  it('fails a step at once on NonRetryableError, and the task ends with an isError result', async () => {
    let runs = 0;
    const { engine } = await setup(async (_args, step) => {
      await step.do('boom', () => {
        runs += 1;
        throw new NonRetryableError('bad input');
      });
      return { content: [] };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    const done = await engine.waitForTerminal(task.taskId);
    expect(runs).toBe(1);
    expect(done?.outcome).toEqual({
      kind: 'result',
      result: { content: [{ type: 'text', text: 'NonRetryableError: bad input' }], isError: true },
    });
  });

  it('refuses a step result over 1 MiB without parsing its text back', async () => {
    const { engine } = await setup(async (_args, step) => {
      await step.do('huge', () => 'x'.repeat(2 * 1024 * 1024));
      return { content: [] };
    });
    // The parses of the whole run, to see that the 2 MiB text is never among them.
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      const done = await engine.waitForTerminal(task.taskId);
      expect(done?.outcome).toMatchObject({ kind: 'result', result: { isError: true } });
      expect(JSON.stringify(done?.outcome)).toContain('larger than 1048576 bytes');
      const longest = Math.max(0, ...parse.mock.calls.map(([text]) => String(text).length));
      expect(longest).toBeLessThan(1024 * 1024);
    } finally {
      parse.mockRestore();
    }
  });

  it('times a step out and retries it', async () => {
    let runs = 0;
    const { engine } = await setup(async (_args, step) => {
      const value = await step.do('slow', { timeoutMs: 50, retries: { limit: 2, baseDelayMs: 10 } }, ({ signal }) => {
        runs += 1;
        if (runs === 1)
          return new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
        return 'second';
      });
      return { content: [{ type: 'text', text: value }] };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    const done = await engine.waitForTerminal(task.taskId);
    expect(runs).toBe(2);
    expect(done?.outcome).toEqual({ kind: 'result', result: { content: [{ type: 'text', text: 'second' }] } });
  });

  it('stops at the next step when cancelled and aborts the running closure', async () => {
    const started: number[] = [];
    let abortedAt: number | undefined;
    const { engine } = await setup(async (_args, step) => {
      for (let i = 0; i < 10; i++) {
        await step.do(`s${i}`, ({ signal }) => {
          started.push(i);
          return new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, 150);
            signal.addEventListener('abort', () => {
              clearTimeout(timer);
              abortedAt = i;
              reject(signal.reason);
            });
          });
        });
      }
      return { content: [] };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await until(() => started.length === 3);
    await engine.cancel('o', task.taskId);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(started).toEqual([0, 1, 2]);
    expect(abortedAt).toBe(2);
    expect((await engine.get('o', task.taskId)).status).toBe('cancelled');
  });

  it('refuses the journal writes of a runner that was superseded, and that runner does not finish the task', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let secondRunReached = false;
    const { engine } = await setup(async (_args, step) => {
      await step.do('a', async () => {
        await gate;
        return 'from the first run';
      });
      secondRunReached = true;
      return { content: [{ type: 'text', text: 'finished' }] };
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    await until(async () => (await engine.store.journal?.read(task.taskId))?.length === 0 && !!release);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Another runner takes the task over (as after a lapsed lease) and claims its journal.
    const takeover = await engine.markStarted(task.taskId, 'another-runner');
    expect(takeover?.attempts).toBe(2);
    expect(await engine.store.journal?.fence(task.taskId, 2)).toBe(true);
    release?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(secondRunReached).toBe(false);
    expect(await engine.store.journal?.read(task.taskId)).toEqual([]);
    const record = await engine.get('o', task.taskId);
    expect(record.status).toBe('working');
    expect(record.runner).toBe('another-runner');
  });

  it('sleeps durably: nothing runs and no slot is held, and a new engine on the same file wakes it on time', async () => {
    const path = join(tempDir(), 'sleep.db');
    let afterRuns = 0;
    const handler: WorkflowHandler<Record<string, unknown>> = async (_args, step) => {
      const before = await step.do('before', () => Date.now());
      await step.sleep('nap', 1500);
      const after = await step.do('after', () => {
        afterRuns += 1;
        return Date.now();
      });
      return { content: [], structuredContent: { sleptMs: after - before, before } };
    };
    const first = await setup(handler, new SqliteStore({ path }));
    const { task } = await first.engine.create({ owner: 'o', request, dialect: 't' });
    const parked = await waitFor(first.engine, task.taskId, (record) => record.suspended === true);
    expect(parked.status).toBe('working');
    expect(parked.wakeAt).toBeGreaterThan(Date.now());
    // The park is stored (and visible) a moment before the run returns and gives its slot back: wait for that, and
    // check that it happens while the task still sleeps and stays parked.
    await until(() => first.executor.activeCount === 0);
    expect(Date.now()).toBeLessThan(parked.wakeAt as number);
    expect(await first.engine.get('o', task.taskId)).toMatchObject({ suspended: true, status: 'working' });
    // This process goes away while the task sleeps; another one takes over.
    await first.executor.close();
    await first.engine.close();
    const second = await setup(handler, new SqliteStore({ path }));
    const done = await second.engine.waitForTerminal(task.taskId);
    const result = (done?.outcome as unknown as { result: { structuredContent: { sleptMs: number } } }).result;
    expect(result.structuredContent.sleptMs).toBeGreaterThanOrEqual(1500);
    expect(result.structuredContent.sleptMs).toBeLessThan(1500 + 1500);
    expect(afterRuns).toBe(1);
  });

  it('ends a task at its workflow timeout, even in the middle of a durable sleep', async () => {
    let afterRan = false;
    const { engine } = await setup(
      async (_args, step) => {
        await step.do('first', () => 1);
        await step.sleep('long', 60_000);
        afterRan = await step.do('after', () => true);
        return { content: [] };
      },
      new MemoryStore(),
      { timeoutMs: 600 },
    );
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    const done = await engine.waitForTerminal(task.taskId);
    expect(done?.outcome).toEqual({
      kind: 'result',
      result: {
        content: [{ type: 'text', text: 'TaskTimeoutError: The task ran past its timeout of 600ms' }],
        isError: true,
      },
    });
    expect((done?.terminalAt as number) - task.createdAt).toBeGreaterThanOrEqual(600);
    expect((done?.terminalAt as number) - task.createdAt).toBeLessThan(600 + 3000);
    expect(afterRan).toBe(false);
  });

  it('runs the same steps within the request when called without a task', async () => {
    const calls: string[] = [];
    const tool = withSteps<Record<string, unknown>>(async (_args, step) => {
      expect(step.taskId).toBeUndefined();
      const a = await step.do('a', () => {
        calls.push('a');
        return 2;
      });
      await step.sleep('pause', 20);
      await expect(step.do('a', () => 3)).rejects.toThrow(/already used/);
      return { content: [{ type: 'text', text: String(a * 21) }] };
    });
    const ctx = { mcpReq: { _meta: {}, signal: new AbortController().signal } };
    expect(await tool({}, ctx as unknown as ServerContext)).toEqual({ content: [{ type: 'text', text: '42' }] });
    expect(calls).toEqual(['a']);
  });
});

describe('standing offers of the step API', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const STOP = { method: 'elicitation/create', params: { message: 'Stop?' } };
  const YES = { result: { action: 'accept', content: { stop: true } } };

  async function run(handler: WorkflowHandler<Record<string, unknown>>, maxSteps?: number) {
    const store = new SqliteStore({ path: join(tempDir(), 'offers.db') });
    const engine = new TaskEngine({ store, sweepIntervalMs: 0, recoveryIntervalMs: 0, wakeIntervalMs: 200 });
    const executor = new InProcessExecutor({ engine, work: journaledWork(engine, toolWork(handler), maxSteps) });
    engine.setExecutor(executor);
    await engine.start();
    cleanups.push(async () => {
      await executor.close();
      await engine.close();
    });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    const done = () => waitFor(engine, task.taskId, (record) => record.terminalAt !== undefined);
    return { engine, taskId: task.taskId, done };
  }

  it('keeps the task working; an answer cuts a parked sleep short, is consumed once and replays as journaled', async () => {
    const runs: number[] = [];
    const started = Date.now();
    const { engine, taskId, done } = await run(async (_args, step) => {
      runs.push(Date.now());
      // A replay's offer finds the first one; within one run the key is taken.
      await step.offer('stop', runs.length === 1 ? STOP : { method: 'elicitation/create', params: { message: 'x' } });
      await expect(step.offer('stop', STOP)).rejects.toThrow(/already used/);
      const before = await step.checkInput('check-0', 'stop');
      await step.sleep('pause', 60_000);
      const after = await step.checkInput('check-1', 'stop');
      const again = await step.checkInput('check-2', 'stop');
      return { content: [], structuredContent: { before, after, again } };
    });
    const parked = await waitFor(engine, taskId, (record) => record.suspended === true);
    expect(parked.status).toBe('working');
    expect(parked.inputRequests).toEqual({});
    expect(parked.offers?.['stop']).toMatchObject({ method: 'elicitation/create', params: { message: 'Stop?' } });
    expect(await engine.answerInput('o', taskId, { stop: YES })).toEqual({ accepted: ['stop'] });
    // The first answer wins; another owner's answer is refused like a missing task.
    expect(await engine.answerInput('o', taskId, { stop: { result: { action: 'decline' } } })).toEqual({
      accepted: [],
    });
    await expect(engine.answerInput('intruder', taskId, { stop: YES })).rejects.toThrow(/not found/i);
    const final = await done();
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(runs).toHaveLength(2);
    expect((final.outcome as { result: Record<string, unknown> }).result['structuredContent']).toEqual({
      before: { state: 'unanswered' },
      after: { state: 'answered', response: { action: 'accept', content: { stop: true } } },
      again: { state: 'unanswered' },
    });
    expect(final.status).toBe('completed');
    expect(final.offers).toBeUndefined();
  });

  it('an answer while the task runs makes the next sleep complete at once', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { engine, taskId, done } = await run(async (_args, step) => {
      await step.offer('stop', STOP);
      await step.do('work', () => gate);
      await step.sleep('pause', 60_000);
      return { content: [], structuredContent: { check: await step.checkInput('check', 'stop') } };
    });
    await waitFor(engine, taskId, (record) => record.offers?.['stop'] !== undefined);
    expect(await engine.answerInput('o', taskId, { stop: YES })).toEqual({ accepted: ['stop'] });
    release();
    const final = await done();
    expect((final.outcome as { result: Record<string, unknown> }).result['structuredContent']).toEqual({
      check: { state: 'answered', response: { action: 'accept', content: { stop: true } } },
    });
  });

  it("refuses a check of a key that is not an offer, and an offer under a question's key", async () => {
    const unknown = await run(async (_args, step) => {
      await step.checkInput('check', 'never-offered');
      return { content: [] };
    });
    const failed = await unknown.done();
    expect(JSON.stringify(failed.outcome)).toContain('UnknownOfferError');

    let runs = 0;
    const clash = await run(async (_args, step) => {
      // The first run asks under `q`; the next (after the answer) offers under the same key.
      if (runs++ === 0) await step.elicit('q', STOP);
      await step.offer('q', STOP);
      return { content: [] };
    });
    await waitFor(clash.engine, clash.taskId, (record) => record.status === 'input_required');
    const [key] = Object.keys((await clash.engine.get('o', clash.taskId)).inputRequests);
    await clash.engine.answerInput('o', clash.taskId, { [key as string]: YES });
    expect(JSON.stringify((await clash.done()).outcome)).toContain('DuplicateStepError');
  });

  /** The task's end when its handler loops without end: refused at the bound, with exactly `max` rows journaled. */
  async function boundedLoop(max: number, loop: WorkflowHandler<Record<string, unknown>>, answer: boolean) {
    const { engine, taskId, done } = await run(loop, max);
    if (answer) {
      await waitFor(engine, taskId, (record) => record.suspended === true);
      expect(await engine.answerInput('o', taskId, { stop: YES })).toEqual({ accepted: ['stop'] });
    }
    const final = await done();
    expect(final.outcome).toMatchObject({ kind: 'result', result: { isError: true } });
    expect(JSON.stringify(final.outcome)).toContain(`the task already has ${max} steps`);
    expect(await engine.store.journal?.read(taskId)).toHaveLength(max);
  }

  it('bounds the journal of a handler sleeping in a loop while an answer waits unconsumed', async () => {
    let naps = 0;
    await boundedLoop(
      6,
      async (_args, step) => {
        await step.offer('stop', STOP);
        // Never checks the offer: once answered, every sleep ends at once and the loop would journal without end.
        for (let i = 0; ; i++) {
          naps = i;
          await step.sleep(`nap-${i}`, 60_000);
        }
      },
      true,
    );
    // The offer and five naps fill the journal; the sixth nap is refused.
    expect(naps).toBe(5);
  });

  it('bounds the journal of a handler checking an offer that is never answered', async () => {
    await boundedLoop(
      5,
      async (_args, step) => {
        await step.offer('stop', STOP);
        for (let i = 0; ; i++) {
          if ((await step.checkInput(`check-${i}`, 'stop')).state === 'answered') return { content: [] };
        }
      },
      false,
    );
  });

  it('on a plain call an offer is never answered and a check finds nothing', async () => {
    const tool = withSteps<Record<string, unknown>>(async (_args, step) => {
      await step.offer('stop', STOP);
      await expect(step.offer('stop', STOP)).rejects.toThrow(/already used/);
      await expect(step.checkInput('bad', 'other')).rejects.toThrow(/not an offer/);
      await expect(step.offer('a:b', STOP)).rejects.toThrow(TypeError);
      return { content: [], structuredContent: { check: await step.checkInput('check', 'stop') } };
    });
    const ctx = { mcpReq: { _meta: {}, signal: new AbortController().signal } };
    expect(await tool({}, ctx as unknown as ServerContext)).toEqual({
      content: [],
      structuredContent: { check: { state: 'unanswered' } },
    });
  });
});

async function until(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function waitFor(
  engine: TaskEngine,
  taskId: string,
  predicate: (record: Awaited<ReturnType<TaskEngine['get']>>) => boolean,
) {
  let found: Awaited<ReturnType<TaskEngine['get']>> | undefined;
  await until(async () => {
    const record = await engine.get('o', taskId);
    if (predicate(record)) found = record;
    return found !== undefined;
  });
  return found as Awaited<ReturnType<TaskEngine['get']>>;
}
