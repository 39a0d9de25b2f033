import { describe, expect, it } from 'vitest';

import { decodeTaskEvent, encodeTaskEvent } from '../../src/engine/index.js';

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
