import { afterEach, describe, expect, it } from 'vitest';

import {
  eventLogTopic,
  StaleLeaseError,
  TASK_STATUS_EVENT,
  TaskEventRejectedError,
  TaskNotFoundError,
  type LoggedEvent,
  type TaskEngine,
} from '../../src/engine/index.js';
import { startEngine } from '../helpers/engines.js';
import { eachStore } from '../stores/eachStore.js';

const request = { method: 'tools/call', params: { name: 'stages', arguments: {} } };

/** A check as the events catalog makes one: `stage` events carry an integer `index`. */
function check(type: string, data: Record<string, unknown>): void {
  if (type !== 'com.example.stage') throw new TaskEventRejectedError('unknown_type', `Unknown event type ${type}`);
  if (!Number.isInteger(data['index'])) throw new TaskEventRejectedError('invalid_payload', 'index must be an integer');
}

async function rejection(promise: Promise<unknown>): Promise<TaskEventRejectedError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TaskEventRejectedError);
  return error as TaskEventRejectedError;
}

// Every store: the emit path is the engine's, the log each store's own.
eachStore(
  'events_emit',
  async (store) => store,
  (name, harness) => {
    describe(`emitting a task's events through the engine (${name})`, () => {
      let engine: TaskEngine;
      afterEach(async () => engine.close());

      const create = async (owner = 'alice') =>
        (await engine.create({ owner, request, dialect: 'ext-tasks', run: false })).task;

      it('appends checked events gap-free from 0 and announces each on the log topic', async () => {
        engine = await startEngine(await harness.create(), { checkEvent: check });
        const task = await create();
        const heard: number[] = [];
        const stop = engine.store.events.subscribe(eventLogTopic(task.taskId), () => heard.push(1));
        const appended: LoggedEvent[] = [];
        engine.onEventAppended((record, event) => record.taskId === task.taskId && appended.push(event));
        expect(await engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 0 } })).toEqual({
          seq: 0,
          duplicate: false,
        });
        await engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 1 } });
        const events = await engine.readEvents('alice', task.taskId, 0, 10);
        expect(events.map((event) => [event.seq, event.type, event.data])).toEqual([
          [0, 'com.example.stage', { index: 0 }],
          [1, 'com.example.stage', { index: 1 }],
        ]);
        expect(appended.map((event) => event.seq)).toEqual([0, 1]);
        await expect.poll(() => heard.length).toBeGreaterThanOrEqual(2);
        stop();
      });

      it('refuses an unknown type, data that fails the check, and data over maxEventBytes, storing nothing', async () => {
        engine = await startEngine(await harness.create(), { checkEvent: check, limits: { maxEventBytes: 100 } });
        const task = await create();
        expect(
          (await rejection(engine.emitEvent(task.taskId, { type: 'com.example.other', data: { index: 0 } }))).reason,
        ).toBe('unknown_type');
        expect(
          (await rejection(engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 'x' } }))).reason,
        ).toBe('invalid_payload');
        expect(
          (await rejection(engine.emitEvent(task.taskId, { type: 'com.example.stage', data: [] as never }))).reason,
        ).toBe('invalid_payload');
        const big = { index: 1, text: 'x'.repeat(200) };
        expect((await rejection(engine.emitEvent(task.taskId, { type: 'com.example.stage', data: big }))).reason).toBe(
          'too_large',
        );
        expect(await engine.eventCount('alice', task.taskId)).toBe(0);
      });

      it('bounds the log at eventsPerTask, yet the terminal status still finds room', async () => {
        engine = await startEngine(await harness.create(), { statusEvents: true, limits: { eventsPerTask: 2 } });
        const task = await create();
        await engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 0 } });
        await engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 1 } });
        const refused = await rejection(
          engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 2 } }),
        );
        expect(refused.reason).toBe('events_per_task');
        expect(refused.message).toContain('eventsPerTask');
        await engine.complete(task.taskId, { kind: 'result', result: { content: [] } });
        const events = await engine.readEvents('alice', task.taskId, 0, 10);
        expect(events.map((event) => event.type)).toEqual([
          'com.example.stage',
          'com.example.stage',
          TASK_STATUS_EVENT,
        ]);
        expect(events[2]?.data).toMatchObject({ taskId: task.taskId, status: 'completed' });
      });

      it('records status changes only when statusEvents is on', async () => {
        engine = await startEngine(await harness.create());
        const task = await create();
        await engine.cancel('alice', task.taskId);
        expect(await engine.eventCount('alice', task.taskId)).toBe(0);
      });

      it('stores a keyed emit once: a replay gets the first one’s seq', async () => {
        engine = await startEngine(await harness.create());
        const task = await create();
        const first = await engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 0 }, key: 'a' });
        const again = await engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 9 }, key: 'a' });
        expect(again).toEqual({ seq: first.seq, duplicate: true });
        expect((await engine.readEvents('alice', task.taskId, 0, 10)).map((event) => event.data)).toEqual([
          { index: 0 },
        ]);
      });

      it('refuses emits once the task ended, and those of a superseded run', async () => {
        engine = await startEngine(await harness.create());
        const task = await create();
        const claimed = await engine.markStarted(task.taskId, 'runner-1');
        const stale = (claimed?.attempts ?? 1) - 1;
        await expect(
          engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 0 } }, stale),
        ).rejects.toBeInstanceOf(StaleLeaseError);
        await engine.cancel('alice', task.taskId);
        expect(
          (await rejection(engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 0 } }))).reason,
        ).toBe('task_ended');
      });

      it('keeps another owner out of a task’s events, and drops the log with the task', async () => {
        engine = await startEngine(await harness.create());
        const task = await create();
        await engine.emitEvent(task.taskId, { type: 'com.example.stage', data: { index: 0 } });
        await expect(engine.readEvents('mallory', task.taskId, 0, 10)).rejects.toBeInstanceOf(TaskNotFoundError);
        await expect(engine.eventCount('mallory', task.taskId)).rejects.toBeInstanceOf(TaskNotFoundError);
        await engine.delete('alice', task.taskId);
        expect(await engine.store.eventLog?.length(task.taskId)).toBe(0);
      });
    });
  },
);
