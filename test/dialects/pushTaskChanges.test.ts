import { afterEach, describe, expect, it, vi } from 'vitest';

import type { TaskEngine, TaskRecord } from '../../src/engine/index.js';
import { pushTaskChanges, type TaskPushView } from '../../src/dialects/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { startEngine } from '../helpers/engines.js';

const request = { method: 'tools/call', params: { name: 'work', arguments: {} } };

/** Pushes the status and message, so a test can tell what was sent and in which order. */
const view = (key: (record: TaskRecord) => string): TaskPushView => ({
  method: 'notifications/test',
  key,
  params: (record) => ({ status: record.status, statusMessage: record.statusMessage ?? null }),
});

describe('pushTaskChanges, the one status push', () => {
  let engine: TaskEngine | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });

  it('pushes when the key changes, ends after the terminal view, and sends nothing after', async () => {
    engine = await startEngine(new MemoryStore());
    const { task } = await engine.create({ owner: 'alice', request, dialect: 'test' });
    const sent: Array<{ method: string; params: Record<string, unknown> }> = [];
    const ended = new Promise<void>((resolve) => {
      pushTaskChanges(
        engine as TaskEngine,
        task.taskId,
        view((record) => record.status),
        (method, params) => {
          sent.push({ method, params });
        },
        { lastKey: 'working', onEnd: resolve },
      );
    });
    // Same status, other message: no push for a status view.
    await engine.setStatusMessage(task.taskId, 'halfway');
    await engine.cancel('alice', task.taskId);
    await ended;
    expect(sent).toEqual([
      { method: 'notifications/test', params: { status: 'cancelled', statusMessage: expect.any(String) } },
    ]);
  });

  it('pushes every change of a view keyed on more than the status, in order', async () => {
    engine = await startEngine(new MemoryStore());
    const { task } = await engine.create({ owner: 'alice', request, dialect: 'test' });
    const statuses: string[] = [];
    const ended = new Promise<void>((resolve) => {
      pushTaskChanges(
        engine as TaskEngine,
        task.taskId,
        view((record) => `${record.status}:${record.statusMessage ?? ''}`),
        (_method, params) => void statuses.push(`${String(params['status'])}:${String(params['statusMessage'])}`),
        { onEnd: resolve },
      );
    });
    await engine.setStatusMessage(task.taskId, 'halfway');
    // Each push has been read before the next change, so none is coalesced.
    await until(() => statuses.length === 1);
    await engine.complete(task.taskId, { kind: 'result', result: { content: [] } });
    await ended;
    expect(statuses).toEqual(['working:halfway', expect.stringMatching(/^completed:/)]);
  });

  it('a status-keyed view reads no change of the same status; a subscriber not listening costs no read', async () => {
    const store = new MemoryStore();
    const on = await startEngine(store, { recheckIntervalMs: 3_600_000 });
    engine = on;
    const reads = vi.spyOn(store, 'get');
    /** The store reads made while `changes` runs. */
    const readsOf = async (changes: () => Promise<unknown>): Promise<number> => {
      const before = reads.mock.calls.length;
      await changes();
      return reads.mock.calls.length - before;
    };
    const newTask = async () => (await on.create({ owner: 'alice', request, dialect: 'test' })).task.taskId;
    /** A push on `taskId`, resolved when it ends. */
    const pushing = (
      taskId: string,
      pushView: TaskPushView,
      onSend: (params: Record<string, unknown>) => void,
      options: { lastKey?: string; listening?: () => boolean } = {},
    ) =>
      new Promise<void>((resolve) => {
        pushTaskChanges(on, taskId, pushView, (_method, params) => onSend(params), { ...options, onEnd: resolve });
      });
    const sent: string[] = [];

    const statusView = { ...view((record) => record.status), keyIsStatus: true };
    const heard = await newTask();
    const heardEnded = pushing(heard, statusView, (p) => sent.push(String(p['status'])), { lastKey: 'working' });
    const someChanges = (taskId: string) => async () => {
      for (let i = 0; i < 3; i++) await on.setStatusMessage(taskId, `step ${i}`);
      await on.cancel('alice', taskId);
    };
    // What the same changes read without a push.
    const changes = await readsOf(someChanges(await newTask()));
    const withPush = await readsOf(async () => {
      await someChanges(heard)();
      await heardEnded;
    });
    // The push read once, for the cancellation.
    expect(withPush).toBe(changes + 1);
    expect(sent).toEqual(['cancelled']);

    // Not listening: nothing read and nothing sent, and still ended by the terminal change.
    let listening = false;
    const fewChanges = (taskId: string) => async () => {
      await on.setStatusMessage(taskId, 'unheard');
      await on.cancel('alice', taskId);
    };
    const deaf = await newTask();
    const deafEnded = pushing(
      deaf,
      view((r) => r.statusMessage ?? ''),
      () => sent.push('deaf'),
      {
        listening: () => listening,
      },
    );
    const deafReads = await readsOf(async () => {
      await fewChanges(deaf)();
      await deafEnded;
    });
    // One status message and a cancellation, as on a task without a push, and nothing for the push.
    expect(deafReads).toBe(await readsOf(fewChanges(await newTask())));
    expect(sent).toEqual(['cancelled']);

    // Listening from a change on: that change is pushed.
    const late = await newTask();
    const lateEnded = pushing(
      late,
      view((r) => r.statusMessage ?? ''),
      (p) => sent.push(String(p['statusMessage'])),
      {
        listening: () => listening,
      },
    );
    await on.setStatusMessage(late, 'missed');
    listening = true;
    await on.setStatusMessage(late, 'heard');
    await until(() => sent.includes('heard'));
    await on.cancel('alice', late);
    await lateEnded;
    expect(sent.slice(1)).toEqual(['heard', expect.any(String)]);
  });

  it('ends when the task is gone, and stop() ends it early without onEnd', async () => {
    engine = await startEngine(new MemoryStore());
    const first = (await engine.create({ owner: 'alice', request, dialect: 'test' })).task;
    const gone = new Promise<void>((resolve) => {
      pushTaskChanges(
        engine as TaskEngine,
        first.taskId,
        view((r) => r.status),
        () => {},
        { onEnd: resolve },
      );
    });
    await engine.cancel('alice', first.taskId);
    await engine.delete('alice', first.taskId);
    await gone;

    const second = (await engine.create({ owner: 'alice', request, dialect: 'test' })).task;
    let calls = 0;
    const stop = pushTaskChanges(
      engine,
      second.taskId,
      view((r) => r.statusMessage ?? ''),
      () => calls++,
      {
        onEnd: () => calls++,
      },
    );
    stop();
    await engine.setStatusMessage(second.taskId, 'after stop');
    // A second push on the task, started later, ends at the cancel: by then the stopped one saw those events too.
    const control = new Promise<void>((resolve) => {
      pushTaskChanges(
        engine as TaskEngine,
        second.taskId,
        view((r) => r.status),
        () => {},
        { onEnd: resolve },
      );
    });
    await engine.cancel('alice', second.taskId);
    await control;
    expect(calls).toBe(0);
  });
});

async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition() && tries < 2000; tries++) await new Promise((r) => setTimeout(r, 1));
  expect(condition()).toBe(true);
}
