import { afterEach, describe, expect, it, vi } from 'vitest';

import {
  ANY_OWNER,
  TaskEngine,
  InvalidCursorError,
  TaskConflictError,
  TaskExpiredError,
  TaskLimitError,
  TaskNotFoundError,
  TaskTerminalError,
  type TaskRecord,
} from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/index.js';
import { ManualClock, STORE_FACTORIES, startEngine } from '../helpers/engines.js';

const request = { method: 'tools/call', params: { name: 'work', arguments: { n: 1 } } };

for (const [storeName, makeStore] of STORE_FACTORIES) {
  describe(`TaskEngine on ${storeName}`, () => {
    const engines: TaskEngine[] = [];
    const open = async (options: Parameters<typeof startEngine>[1] = {}) => {
      const engine = await startEngine(makeStore(), options);
      engines.push(engine);
      return engine;
    };
    afterEach(async () => {
      for (const engine of engines.splice(0)) await engine.close();
    });

    it('creates a working task that is durable and readable at once', async () => {
      const engine = await open();
      const { task, created } = await engine.create({ owner: 'alice', request, dialect: 'test' });
      expect(created).toBe(true);
      expect(task.status).toBe('working');
      expect(task.taskId).toMatch(/^[0-9a-f-]{36}$/);
      expect(await engine.get('alice', task.taskId)).toEqual(task);
    });

    it('hides another owner’s task exactly like a missing one', async () => {
      const engine = await open();
      const { task } = await engine.create({ owner: 'alice', request, dialect: 'test' });
      const foreign = await engine.get('mallory', task.taskId).catch((e: unknown) => e);
      const missing = await engine.get('mallory', 'no-such-task').catch((e: unknown) => e);
      expect(foreign).toBeInstanceOf(TaskNotFoundError);
      expect(missing).toBeInstanceOf(TaskNotFoundError);
      expect((foreign as Error).message).toBe((missing as Error).message);
      await expect(engine.cancel('mallory', task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(engine.delete('mallory', task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(engine.answerInput('mallory', task.taskId, {})).rejects.toBeInstanceOf(TaskNotFoundError);
      expect((await engine.list('mallory')).tasks).toEqual([]);
      // Only a task created without authentication is reachable by its id alone.
      await expect(engine.get(ANY_OWNER, task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
      await expect(engine.answerInput(ANY_OWNER, task.taskId, {})).rejects.toBeInstanceOf(TaskNotFoundError);
      const reachable = (await engine.create({ owner: 'session:1', reachableById: true, request, dialect: 'test' }))
        .task;
      expect((await engine.get(ANY_OWNER, reachable.taskId)).taskId).toBe(reachable.taskId);
      // Another named owner still does not reach it: the capability is for callers that cannot be identified.
      await expect(engine.get('alice', reachable.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
    });

    it('reads records of older versions by their owner: a principal’s are never reachable by id', async () => {
      const engine = await open();
      const { task } = await engine.create({ owner: 'principal:["a",null]', request, dialect: 'test' });
      const { task: anonymous } = await engine.create({ owner: 'session:s', request, dialect: 'test' });
      for (const record of [task, anonymous]) {
        const { reachableById: _dropped, ...older }: TaskRecord = record;
        expect(await engine.store.replace({ ...older, version: record.version + 1 }, record.version)).toBe(true);
      }
      await expect(engine.get(ANY_OWNER, task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
      expect((await engine.get(ANY_OWNER, anonymous.taskId)).taskId).toBe(anonymous.taskId);
    });

    it('clamps requested retention to the limits and reports the actual value', async () => {
      const clock = new ManualClock();
      const engine = await open({ clock, limits: { maxTtlMs: 60_000, defaultTtlMs: 30_000, minTtlMs: 1000 } });
      const ask = async (retention: Parameters<TaskEngine['create']>[0]['retention']) =>
        (await engine.create({ owner: 'o', request, dialect: 'test', ...(retention && { retention }) })).task;
      expect((await ask({ kind: 'ttl', ttlMs: 5_000_000 })).retention).toEqual({ kind: 'ttl', ttlMs: 60_000 });
      expect((await ask({ kind: 'ttl', ttlMs: null })).retention).toEqual({ kind: 'ttl', ttlMs: 60_000 });
      expect((await ask({ kind: 'ttl', ttlMs: 5 })).retention).toEqual({ kind: 'ttl', ttlMs: 1000 });
      const byDefault = await ask(undefined);
      expect(byDefault.retention).toEqual({ kind: 'ttl', ttlMs: 30_000 });
      expect(byDefault.expiresAt).toBe(clock.time + 30_000);
      const keepAlive = await ask({ kind: 'keepAlive', keepAliveMs: 10_000 });
      expect(keepAlive.expiresAt).toBeNull();
    });

    it('makes expired tasks invisible and sweeps them at a cost of what expired', async () => {
      const clock = new ManualClock();
      const engine = await open({ clock });
      const short = (
        await engine.create({ owner: 'o', request, dialect: 'test', retention: { kind: 'ttl', ttlMs: 2000 } })
      ).task;
      const long = (
        await engine.create({ owner: 'o', request, dialect: 'test', retention: { kind: 'ttl', ttlMs: 60_000 } })
      ).task;
      clock.advance(2000);
      await expect(engine.get('o', short.taskId)).rejects.toBeInstanceOf(TaskExpiredError);
      // A foreign caller still learns nothing, not even that it expired.
      await expect(engine.get('x', short.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
      expect((await engine.list('o')).tasks.map((t) => t.taskId)).toEqual([long.taskId]);
      expect(await engine.sweep()).toBe(1);
      expect(await engine.sweep()).toBe(0);
      await expect(engine.get('o', short.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
      expect((await engine.get('o', long.taskId)).taskId).toBe(long.taskId);
    });

    it('counts keep-alive retention from the terminal status', async () => {
      const clock = new ManualClock();
      const engine = await open({ clock });
      const { task } = await engine.create({
        owner: 'o',
        request,
        dialect: 'sep',
        retention: { kind: 'keepAlive', keepAliveMs: 5000 },
      });
      clock.advance(100_000);
      expect((await engine.get('o', task.taskId)).status).toBe('working');
      await engine.complete(task.taskId, { kind: 'result', result: { content: [] } });
      expect((await engine.get('o', task.taskId)).expiresAt).toBe(clock.time + 5000);
      clock.advance(5000);
      await expect(engine.get('o', task.taskId)).rejects.toBeInstanceOf(TaskExpiredError);
    });

    it('stores outcomes exactly and applies the dialect’s isError policy', async () => {
      const engine = await open();
      const toolError = { content: [{ type: 'text', text: 'disk full' }], isError: true };
      const legacy = (await engine.create({ owner: 'o', request, dialect: 'a', toolErrorStatus: 'failed' })).task;
      const modern = (await engine.create({ owner: 'o', request, dialect: 'b', toolErrorStatus: 'completed' })).task;
      const rpc = (await engine.create({ owner: 'o', request, dialect: 'a' })).task;
      await engine.complete(legacy.taskId, { kind: 'result', result: toolError });
      await engine.complete(modern.taskId, { kind: 'result', result: toolError });
      const error = { code: -32000, message: 'upstream', data: { retryAfter: 3 } };
      await engine.complete(rpc.taskId, { kind: 'error', error });
      const l = await engine.get('o', legacy.taskId);
      expect(l.status).toBe('failed');
      expect(l.statusMessage).toContain('disk full');
      expect(l.outcome).toEqual({ kind: 'result', result: toolError });
      expect((await engine.get('o', modern.taskId)).status).toBe('completed');
      const r = await engine.get('o', rpc.taskId);
      expect(r.status).toBe('failed');
      expect(r.outcome).toEqual({ kind: 'error', error });
    });

    it('leaves exactly one terminal state when completion races cancellation', async () => {
      const engine = await open();
      for (let round = 0; round < 25; round++) {
        const { task } = await engine.create({ owner: 'o', request, dialect: 'test' });
        const [completed, cancelled] = await Promise.allSettled([
          engine.complete(task.taskId, { kind: 'result', result: { content: [{ type: 'text', text: 'done' }] } }),
          engine.cancel('o', task.taskId),
        ]);
        const final = await engine.get('o', task.taskId);
        const completeWon = completed.status === 'fulfilled' && completed.value === true;
        const cancelWon = cancelled.status === 'fulfilled';
        expect(completeWon !== cancelWon).toBe(true);
        expect(final.status).toBe(completeWon ? 'completed' : 'cancelled');
        if (!cancelWon) expect((cancelled as PromiseRejectedResult).reason).toBeInstanceOf(TaskTerminalError);
        // spec R51: a cancelled task keeps no late outcome.
        if (cancelWon) expect(final.outcome).toBeUndefined();
      }
    });

    it('returns the existing task for an identical idempotent retry and refuses a different request', async () => {
      const engine = await open();
      const first = await engine.create({ owner: 'o', request, dialect: 'sep', idempotencyKey: 'job-7' });
      const again = await engine.create({
        owner: 'o',
        request: { ...request },
        dialect: 'sep',
        idempotencyKey: 'job-7',
      });
      expect(again.created).toBe(false);
      expect(again.task.taskId).toBe(first.task.taskId);
      await expect(
        engine.create({
          owner: 'o',
          request: { method: 'tools/call', params: { name: 'other' } },
          dialect: 'sep',
          idempotencyKey: 'job-7',
        }),
      ).rejects.toBeInstanceOf(TaskConflictError);
      const otherOwner = await engine.create({ owner: 'p', request, dialect: 'sep', idempotencyKey: 'job-7' });
      expect(otherOwner.created).toBe(true);
      expect((await engine.getByIdempotencyKey('o', 'job-7')).taskId).toBe(first.task.taskId);
      await expect(engine.getByIdempotencyKey('q', 'job-7')).rejects.toBeInstanceOf(TaskNotFoundError);
    });

    it('paginates an owner’s tasks with opaque, tamper-proof cursors', async () => {
      const clock = new ManualClock();
      const engine = await open({ clock, limits: { listPageSize: 4 } });
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) {
        ids.push((await engine.create({ owner: 'o', request, dialect: 't' })).task.taskId);
        if (i % 3 === 0) clock.advance(1);
      }
      await engine.create({ owner: 'p', request, dialect: 't' });
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await engine.list('o', cursor === undefined ? {} : { cursor });
        seen.push(...page.tasks.map((t) => t.taskId));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect([...seen].sort()).toEqual([...ids].sort());
      expect(new Set(seen).size).toBe(10);

      const first = await engine.list('o');
      const valid = first.nextCursor as string;
      const [body, mac] = valid.split('.') as [string, string];
      const forged = `${Buffer.from(Buffer.from(body, 'base64url').toString().replace('"c":', '"c":1')).toString('base64url')}.${mac}`;
      await expect(engine.list('o', { cursor: forged })).rejects.toMatchObject({ reason: 'forged' });
      await expect(engine.list('o', { cursor: 'garbage' })).rejects.toMatchObject({ reason: 'malformed' });
      await expect(engine.list('p', { cursor: valid })).rejects.toMatchObject({ reason: 'foreign' });
      clock.advance(2 * 60 * 60 * 1000);
      await expect(engine.list('o', { cursor: valid })).rejects.toBeInstanceOf(InvalidCursorError);
    });

    it('keeps input keys unique and returns to working once every request is answered', async () => {
      const engine = await open();
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      const [a, b] = await engine.requestInput(task.taskId, [
        { method: 'elicitation/create', params: { message: 'A?' } },
        { method: 'elicitation/create', params: { message: 'B?' } },
      ]);
      expect(a).not.toBe(b);
      expect((await engine.get('o', task.taskId)).status).toBe('input_required');
      const partial = await engine.answerInput('o', task.taskId, {
        [a as string]: { result: { action: 'accept' } },
        bogus: { result: {} },
      });
      expect(partial.accepted).toEqual([a]);
      const mid = await engine.get('o', task.taskId);
      expect(mid.status).toBe('input_required');
      expect(Object.keys(mid.inputRequests)).toEqual([b]);
      // A replayed key is no longer outstanding and is ignored.
      expect((await engine.answerInput('o', task.taskId, { [a as string]: { result: {} } })).accepted).toEqual([]);
      await engine.answerInput('o', task.taskId, { [b as string]: { error: { code: -1, message: 'declined' } } });
      expect((await engine.get('o', task.taskId)).status).toBe('working');
      expect(await engine.awaitInputAnswer(task.taskId, a as string)).toEqual({ result: { action: 'accept' } });
      expect(await engine.awaitInputAnswer(task.taskId, b as string)).toEqual({
        error: { code: -1, message: 'declined' },
      });
      const [c] = await engine.requestInput(task.taskId, [{ method: 'sampling/createMessage' }]);
      expect([a, b]).not.toContain(c);
    });

    it('wakes waiters from events, not timers', async () => {
      // A re-check interval far beyond the test's life proves the wake-up came from the event.
      const engine = await open({ recheckIntervalMs: 3_600_000 });
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      const terminal = engine.waitForTerminal(task.taskId);
      const change = engine.waitForChange(task.taskId, task.version);
      await engine.setStatusMessage(task.taskId, 'halfway');
      expect((await change)?.statusMessage).toBe('halfway');
      await engine.complete(task.taskId, { kind: 'result', result: { ok: true } });
      expect((await terminal)?.status).toBe('completed');
      const other = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
      const gone = engine.waitForTerminal(other.taskId);
      await engine.delete('o', other.taskId);
      expect(await gone).toBeUndefined();
    });

    it('lets an AbortSignal end a wait', async () => {
      const engine = await open();
      const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
      const controller = new AbortController();
      const wait = engine.waitForTerminal(task.taskId, controller.signal);
      controller.abort(new Error('client went away'));
      await expect(wait).rejects.toThrow('client went away');
    });

    it('holds the active-task limit exactly when one owner creates many tasks at once', async () => {
      const engine = await open({ limits: { maxActivePerOwner: 5 } });
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => engine.create({ owner: 'o', request, dialect: 't' })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
      expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof TaskLimitError)).toHaveLength(15);
      expect(await engine.store.countActive('o')).toBe(5);
    });

    it('caps concurrent tasks per owner', async () => {
      const engine = await open({ limits: { maxActivePerOwner: 2 } });
      const a = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
      await engine.create({ owner: 'o', request, dialect: 't' });
      await expect(engine.create({ owner: 'o', request, dialect: 't' })).rejects.toBeInstanceOf(TaskLimitError);
      await engine.create({ owner: 'p', request, dialect: 't' });
      await engine.cancel('o', a.taskId);
      await engine.create({ owner: 'o', request, dialect: 't' });
    });

    it('caps stored tasks per owner, finished ones included, and sweeps expired ones before refusing', async () => {
      const clock = new ManualClock();
      const engine = await open({ clock, limits: { maxStoredPerOwner: 2, minTtlMs: 1 } });
      const short = (await engine.create({ owner: 'o', request, dialect: 't', retention: { kind: 'ttl', ttlMs: 50 } }))
        .task;
      const long = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
      await engine.cancel('o', short.taskId);
      await engine.cancel('o', long.taskId);
      const refused = await engine.create({ owner: 'o', request, dialect: 't' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TaskLimitError);
      expect((refused as TaskLimitError).limit).toBe('stored_tasks');
      await engine.create({ owner: 'p', request, dialect: 't' });
      clock.advance(51);
      await engine.create({ owner: 'o', request, dialect: 't' });
      expect(await engine.store.get(short.taskId)).toBeUndefined();
    });

    it('fails tasks whose runner stopped renewing, by default, and re-runs retry-safe ones', async () => {
      const clock = new ManualClock();
      const submitted: TaskRecord[] = [];
      const executor = {
        runnerId: 'runner-1',
        leasesOnCreate: true,
        submit: async (task: TaskRecord) => void submitted.push(task),
        close: async () => {},
      };
      const engine = await open({ clock, executor, leaseMs: 1000 });
      const plain = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
      const safe = (await engine.create({ owner: 'o', request, dialect: 't', retrySafe: true })).task;
      // Both runs began: a task that never started is queued again whatever its retry safety (below).
      await engine.markStarted(plain.taskId, 'runner-1');
      await engine.markStarted(safe.taskId, 'runner-1');
      await engine.requestInput(safe.taskId, [{ method: 'elicitation/create' }]);
      submitted.length = 0;
      expect(await engine.recover()).toEqual({ failed: 0, rerun: 0 });
      clock.advance(1001);
      expect(await engine.recover()).toEqual({ failed: 1, rerun: 1 });
      const failed = await engine.get('o', plain.taskId);
      expect(failed.status).toBe('failed');
      expect(failed.statusMessage).toMatch(/stopped renewing its lease .* whether the work finished is unknown/);
      expect(failed.recovery).toBe('failed-after-crash');
      const rerun = await engine.get('o', safe.taskId);
      expect(rerun.status).toBe('working');
      expect(rerun.inputRequests).toEqual({});
      expect(submitted.map((t) => t.taskId)).toEqual([safe.taskId]);
      expect(await engine.recover()).toEqual({ failed: 0, rerun: 0 });
    });

    it('queues a task that never started again after its holder stopped, though it is not retry-safe', async () => {
      const clock = new ManualClock();
      const submitted: TaskRecord[] = [];
      const executor = {
        runnerId: 'runner-1',
        leasesOnCreate: true,
        submit: async (task: TaskRecord) => void submitted.push(task),
        close: async () => {},
      };
      const engine = await open({ clock, executor, leaseMs: 1000 });
      // Leased to the runner while it waited for a slot, never claimed (attempts 0), then the runner died.
      const waiting = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
      expect(waiting.attempts).toBe(0);
      submitted.length = 0;
      clock.advance(1001);
      expect(await engine.recover()).toEqual({ failed: 0, rerun: 1 });
      const requeued = await engine.get('o', waiting.taskId);
      expect(requeued).toMatchObject({ status: 'working', attempts: 0, recovery: 'requeued-before-start' });
      expect(requeued.statusMessage).toMatch(/stopped before its work started/);
      expect(submitted.map((t) => t.taskId)).toEqual([waiting.taskId]);
      // It runs like any task: the claim is its first attempt.
      expect((await engine.markStarted(waiting.taskId, 'runner-1'))?.attempts).toBe(1);
    });
  });
}

// Engine-level read counts: the memory store's get can be counted directly (the SQLite store's is a fixed wrapper).
describe('TaskEngine reads', () => {
  const engines: TaskEngine[] = [];
  afterEach(async () => {
    for (const engine of engines.splice(0)) await engine.close();
  });

  /** An engine on a store that counts its reads of a task. */
  const openCounting = async (options: Parameters<typeof startEngine>[1] = {}) => {
    const store = new MemoryStore();
    const reads = vi.spyOn(store, 'get');
    const engine = await startEngine(store, options);
    engines.push(engine);
    return { engine, reads: () => reads.mock.calls.length };
  };

  it('reads a task for a waiter only on changes that can end its wait', async () => {
    const { engine, reads } = await openCounting({ recheckIntervalMs: 3_600_000 });
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    const before = reads();
    const terminal = engine.waitForTerminal(task.taskId);
    // Past version+1 only: the event of version+1 says it cannot end this wait.
    const later = engine.waitForChange(task.taskId, task.version + 1);
    for (let i = 0; i < 5; i++) await engine.setStatusMessage(task.taskId, `step ${i}`);
    expect((await later)?.version).toBe(task.version + 2);
    await engine.complete(task.taskId, { kind: 'result', result: { ok: true } });
    expect((await terminal)?.status).toBe('completed');
    // Each update reads once for its compare-and-set (6). The terminal wait reads when it starts and on the
    // terminal change (2); the change wait when it starts and on version+2 (2). No read for the changes between.
    expect(reads() - before).toBe(6 + 2 + 2);
  });

  it('tries a write on the caller’s copy of the task first, and decides on a fresh read when it is stale', async () => {
    const { engine, reads } = await openCounting();
    const { task } = await engine.create({ owner: 'o', request, dialect: 't' });
    let before = reads();
    const claimed = await engine.markStarted(task.taskId, 'runner-1', task.attempts + 1, task);
    expect(claimed).toMatchObject({ runner: 'runner-1', attempts: task.attempts + 1, version: task.version + 1 });
    expect(reads()).toBe(before);
    // A stale copy: its compare-and-set fails, and the write is made on the stored task.
    await engine.setStatusMessage(task.taskId, 'moved on');
    before = reads();
    expect(await engine.complete(task.taskId, { kind: 'result', result: { n: 1 } }, undefined, claimed)).toBe(true);
    const done = await engine.get('o', task.taskId);
    // The failed compare-and-set on the copy, then one read for the write and one for the get above.
    expect(reads() - before).toBe(2);
    expect(done).toMatchObject({ status: 'completed', statusMessage: 'moved on', version: task.version + 3 });
    // A copy that says the task is over does not refuse a write the stored task allows.
    const other = (await engine.create({ owner: 'o', request, dialect: 't' })).task;
    const wrong: TaskRecord = { ...other, status: 'completed' };
    expect(await engine.markStarted(other.taskId, 'runner-2', other.attempts + 1, wrong)).toMatchObject({
      runner: 'runner-2',
      status: 'working',
    });
  });
});

// Stores write limits into their statements (PostgreSQL binds them as bigint): a limit that is no whole number would
// fail every creation there, so the engine refuses it as it is made, naming the limit.
describe('TaskEngine limits', () => {
  it('refuses a limit that is not a whole number in range, naming it', () => {
    const make = (limits: Record<string, unknown>) => () =>
      new TaskEngine({ store: new MemoryStore(), limits: limits as never });
    expect(make({ timelineEntries: Infinity })).toThrow(/limits\.timelineEntries must be an integer of at least 0/);
    expect(make({ maxActivePerOwner: 2.5 })).toThrow(/limits\.maxActivePerOwner/);
    expect(make({ listPageSize: 0 })).toThrow(/limits\.listPageSize must be an integer of at least 1/);
    expect(make({ maxTtlMs: -1 })).toThrow(/limits\.maxTtlMs/);
    expect(make({ maxResultBytes: '4MB' })).toThrow(/limits\.maxResultBytes/);
  });

  it('keeps a null size cap (no cap), and the default of a limit given as undefined', () => {
    const engine = new TaskEngine({
      store: new MemoryStore(),
      limits: { maxResultBytes: null, timelineEntries: 0, maxActivePerOwner: undefined as never },
    });
    expect(engine.limits.maxResultBytes).toBeNull();
    expect(engine.limits.timelineEntries).toBe(0);
    expect(engine.limits.maxActivePerOwner).toBe(1000);
  });
});
