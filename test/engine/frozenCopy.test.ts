import { describe, expect, it } from 'vitest';

import { frozenCopy, type TaskRecord } from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { makeRecord } from '../helpers/records.js';

function isDeeplyFrozen(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeeplyFrozen);
}

describe('frozenCopy', () => {
  it('copies every level and freezes the copy, leaving the original editable and apart', () => {
    const original = { a: 1, nested: { list: [{ x: 1 }, 'two', null], none: undefined as unknown } };
    const copy = frozenCopy(original);
    expect(copy).toStrictEqual(original);
    expect(isDeeplyFrozen(copy)).toBe(true);
    expect(Object.isFrozen(original.nested)).toBe(false);
    original.nested.list.push('later');
    (original.nested.list[0] as { x: number }).x = 2;
    expect(copy.nested.list).toEqual([{ x: 1 }, 'two', null]);
    expect('none' in copy.nested).toBe(true);
  });

  it('keeps the members that are the very ones of the copy it replaces, and copies the rest', () => {
    const stored = frozenCopy(makeRecord({ meta: { a: 1 } }));
    const next: TaskRecord = { ...stored, status: 'completed', outcome: { kind: 'result', result: { content: [] } } };
    const copy = frozenCopy(next, stored);
    expect(copy.request).toBe(stored.request);
    expect(copy.meta).toBe(stored.meta);
    expect(copy.outcome).not.toBe(next.outcome);
    expect(copy.outcome).toEqual(next.outcome);
    expect(isDeeplyFrozen(copy)).toBe(true);
    // An equal but different object is not assumed frozen: it is copied.
    const lookalike = frozenCopy({ ...stored, meta: { a: 1 } }, stored);
    expect(lookalike.meta).not.toBe(stored.meta);
  });

  it('copies values that are not plain objects as structuredClone does', () => {
    const when = new Date(0);
    const copy = frozenCopy({ when, map: new Map([['k', 1]]) });
    expect(copy.when).toBeInstanceOf(Date);
    expect(copy.when).not.toBe(when);
    expect(copy.when.getTime()).toBe(0);
    expect(copy.map.get('k')).toBe(1);
  });

  it('keeps a "__proto__" key as data, never as the copy\'s prototype', () => {
    const parsed = JSON.parse('{"args": {"__proto__": {"polluted": true}, "b": 2}}') as {
      args: Record<string, unknown>;
    };
    const copy = frozenCopy(parsed);
    expect(Object.getPrototypeOf(copy.args)).toBe(Object.prototype);
    expect((copy.args as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.keys(copy.args)).toEqual(['__proto__', 'b']);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
  });

  it('is what the memory store keeps: a caller editing its record after a write changes nothing stored', async () => {
    const store = new MemoryStore();
    const record = makeRecord({ meta: { step: 1 } });
    await store.insert(record);
    (record.meta as { step: number }).step = 2;
    const stored = (await store.get(record.taskId)) as TaskRecord;
    expect(stored.meta).toEqual({ step: 1 });
    expect(isDeeplyFrozen(stored)).toBe(true);
    const next = { ...stored, version: stored.version + 1, meta: { step: 3 } };
    expect(await store.replace(next, stored.version)).toBe(true);
    next.meta.step = 4;
    const replaced = (await store.get(record.taskId)) as TaskRecord;
    expect(replaced.meta).toEqual({ step: 3 });
    expect(replaced.request).toBe(stored.request);
  });
});
