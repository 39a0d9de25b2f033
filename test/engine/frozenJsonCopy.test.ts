import { describe, expect, it } from 'vitest';

import { frozenJsonCopy } from '../../src/engine/frozenJsonCopy.js';

const viaJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

describe('frozenJsonCopy: a deep-frozen copy as JSON would read it back, sharing what it made before', () => {
  it('reads back as JSON does', () => {
    const values: unknown[] = [
      { a: 1, b: 'x', c: null, d: undefined, e: [1, undefined, () => 1, Symbol('s')], f: () => 1 },
      { n: Number.NaN, i: Number.POSITIVE_INFINITY, z: -0, nested: { deep: [{ x: [true, false] }] } },
      { at: new Date(1_700_000_000_000), boxed: [new Number(3), new String('s'), new Boolean(false)] },
      { custom: { toJSON: (key: string) => ({ key, v: 1 }) }, map: new Map([[1, 2]]) },
      [undefined, null, 'a'],
      'plain',
      42,
    ];
    for (const value of values) expect(frozenJsonCopy(value)).toEqual(viaJson(value));
  });

  it('keeps a __proto__ key as an own property, as JSON.parse does, without touching the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copied = frozenJsonCopy(parsed);
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.keys(copied)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(copied)).toBe(JSON.stringify(parsed));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('is deep-frozen, and changing the original afterwards leaves it as copied', () => {
    const original = { request: { params: { name: 'a', arguments: { list: [1, 2] } } } };
    const copied = frozenJsonCopy(original);
    expect(isDeepFrozen(copied)).toBe(true);
    original.request.params.arguments.list.push(3);
    original.request.params.name = 'b';
    expect(copied).toEqual({ request: { params: { name: 'a', arguments: { list: [1, 2] } } } });
  });

  it('shares the parts an earlier copy made, and copies the rest', () => {
    const stored = frozenJsonCopy({ status: 'working', request: { params: { name: 'a' } }, meta: { tags: ['x'] } });
    const result = { content: [{ type: 'text', text: 'done' }] };
    const next = frozenJsonCopy({ ...stored, status: 'completed', result });
    expect(next.request).toBe(stored.request);
    expect(next.meta).toBe(stored.meta);
    expect(next.result).not.toBe(result);
    expect(next).toEqual({ ...viaJson(stored), status: 'completed', result });
  });

  it('does not share a frozen object it did not make: a shallow freeze leaves its children mutable', () => {
    const shallow = Object.freeze({ list: [1] });
    const copied = frozenJsonCopy({ shallow });
    expect(copied.shallow).not.toBe(shallow);
    shallow.list.push(2);
    expect(copied.shallow.list).toEqual([1]);
  });

  it('copies a value deeper than records go as JSON would, frozen', () => {
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 1500; i++) at = at['next'] = { i };
    const copied = frozenJsonCopy(deep);
    expect(copied).toEqual(viaJson(deep));
    expect(isDeepFrozen(copied)).toBe(true);
  });

  it('refuses what JSON.stringify refuses: a BigInt and a cycle', () => {
    expect(() => frozenJsonCopy({ n: 1n })).toThrow(TypeError);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    expect(() => frozenJsonCopy(cyclic)).toThrow(TypeError);
    const list: unknown[] = [];
    list.push([list]);
    expect(() => frozenJsonCopy({ list })).toThrow(TypeError);
  });
});
