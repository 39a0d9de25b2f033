import { describe, expect, it } from 'vitest';

import {
  decodeTaskEvent,
  encodeTaskEvent,
  LocalEventBus,
  TASK_EVENT_RECORD_MAX_BYTES,
  taskIdOfEvent,
  type TaskRecord,
} from '../../src/engine/index.js';

describe('task event payloads (cross-process buses)', () => {
  it('round-trips a task id with and without its change', () => {
    for (const taskId of ['0b1c', 'with spaces and "quotes"', '[', '["t",1,"working"]', '[1]', '']) {
      expect(decodeTaskEvent(encodeTaskEvent(taskId))).toEqual({ taskId });
      expect(decodeTaskEvent(encodeTaskEvent(taskId, { version: 4, status: 'cancelled' }))).toEqual({
        taskId,
        change: { version: 4, status: 'cancelled' },
      });
    }
  });

  it('sends a plain id as it is', () => {
    expect(encodeTaskEvent('abc')).toBe('abc');
  });

  it('reads anything that is not a well-formed event as a bare id', () => {
    for (const payload of ['[not json', '["t",1]', '["t","1","working"]', '["t",1,"sleeping"]', '[1,2,3]', '{}'])
      expect(decodeTaskEvent(payload)).toEqual({ taskId: payload });
  });
});

describe('the record an ending carries', () => {
  const record = {
    taskId: 't1',
    version: 3,
    status: 'completed',
    owner: 'o',
    result: { content: [{ type: 'text', text: 'é' }] },
  } as unknown as TaskRecord;

  it('goes with the event and comes back whole', () => {
    const payload = encodeTaskEvent('t1', { version: 3, status: 'completed', record });
    expect(decodeTaskEvent(payload)).toEqual({ taskId: 't1', change: { version: 3, status: 'completed', record } });
    expect(taskIdOfEvent(payload)).toBe('t1');
  });

  it('is left out when the message would pass TASK_EVENT_RECORD_MAX_BYTES (counted in UTF-8)', () => {
    // Under the bound in UTF-16 units, over it in bytes.
    const text = 'é'.repeat(TASK_EVENT_RECORD_MAX_BYTES / 2);
    const large = { ...record, result: { content: [{ type: 'text', text }] } } as unknown as TaskRecord;
    const payload = encodeTaskEvent('t1', { version: 3, status: 'completed', record: large });
    expect(decodeTaskEvent(payload)).toEqual({ taskId: 't1', change: { version: 3, status: 'completed' } });
  });

  it('is ignored unless it is the record the event announces', () => {
    for (const other of [
      { ...record, taskId: 't2' },
      { ...record, version: 2 },
      { ...record, status: 'failed' },
      [record],
      'record',
    ]) {
      const payload = JSON.stringify(['t1', 3, 'completed', other]);
      expect(decodeTaskEvent(payload)).toEqual({ taskId: 't1', change: { version: 3, status: 'completed' } });
    }
  });

  it('never crosses within a process: a local subscriber gets the change without it', () => {
    const bus = new LocalEventBus();
    const heard: unknown[] = [];
    bus.subscribe('t1', (change) => heard.push(change));
    bus.publish('t1', { version: 3, status: 'completed', record });
    bus.dispatch(encodeTaskEvent('t1', { version: 3, status: 'completed', record }));
    expect(heard).toEqual([
      { version: 3, status: 'completed' },
      { version: 3, status: 'completed', record },
    ]);
  });

  it('names the task of a message without decoding it, for any id', () => {
    for (const taskId of ['0b1c', 'with spaces and "quotes"', '[', '["t",1,"working"]', 'back\\slash', ''])
      expect(taskIdOfEvent(encodeTaskEvent(taskId, { version: 1, status: 'working' }))).toBe(taskId);
    expect(taskIdOfEvent('plain')).toBe('plain');
    expect(taskIdOfEvent('[1,2]')).toBeUndefined();
  });
});
