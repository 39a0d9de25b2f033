import { deepFreeze } from './deepFreeze.js';

/** Values this module made: deep-frozen and shaped as JSON already, so a later copy shares them as they are. */
const settled = new WeakSet<object>();

/** Nesting past which the copy leaves the value to JSON itself (a cycle, or a value deeper than records go). */
const MAX_DEPTH = 1_000;

/**
 * A deep-frozen copy of `value` as it would read back from JSON (`JSON.parse(JSON.stringify(value))`): `toJSON`
 * applied, undefined, functions and symbols dropped from objects and null in arrays, non-finite numbers null. Parts
 * that an earlier copy made are shared instead of copied, so storing a record built from a stored one (`{...stored,
 * status}`) copies only what changed. Throws a TypeError where JSON.stringify would (a BigInt, a cycle).
 */
export function frozenJsonCopy<T>(value: T): T {
  try {
    return copy(value, '', 0) as T;
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    // JSON itself decides: a cycle is refused, a deep value kept as far as JSON.stringify goes.
    return deepFreeze(JSON.parse(JSON.stringify(value)) as T);
  }
}

class TooDeep extends Error {}

function copy(value: unknown, key: string, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return primitive(value);
  if (settled.has(value)) return value;
  if (depth > MAX_DEPTH) throw new TooDeep();
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return copy(toJSON.call(value, key), key, depth);
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return primitive(value.valueOf());
  let out: unknown;
  if (Array.isArray(value)) {
    const array: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) {
      const copied = copy(value[index], String(index), depth + 1);
      array[index] = copied === undefined ? null : copied;
    }
    out = array;
  } else {
    const object: Record<string, unknown> = {};
    for (const name of Object.keys(value)) {
      const copied = copy((value as Record<string, unknown>)[name], name, depth + 1);
      if (copied === undefined) continue;
      // As JSON.parse makes it: an own property, even one named __proto__.
      if (name === '__proto__')
        Object.defineProperty(object, name, { value: copied, enumerable: true, writable: true, configurable: true });
      else object[name] = copied;
    }
    out = object;
  }
  Object.freeze(out);
  settled.add(out as object);
  return out;
}

function primitive(value: unknown): unknown {
  switch (typeof value) {
    case 'number':
      // -0 reads back as 0.
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
    case 'bigint':
      throw new TypeError('Not storable as JSON: a BigInt');
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return value;
  }
}
