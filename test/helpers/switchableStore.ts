import type { TaskStore } from '../../src/engine/index.js';

/**
 * A real store behind a switch: while `down`, every call fails as a refused connection does; while `dropReplies`,
 * every `replace` (an update) is applied and then fails as a connection lost before its reply does. Its change events still flow.
 */
export function switchable(store: TaskStore): {
  store: TaskStore;
  setDown(down: boolean): void;
  setDropReplies(drop: boolean): void;
} {
  let down = false;
  let dropReplies = false;
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'events') return value;
      return async (...args: unknown[]) => {
        if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
        if (dropReplies && key === 'replace') throw new Error('Connection lost before the reply');
        return result;
      };
    },
  });
  return {
    store: proxy,
    setDown: (value) => void (down = value),
    setDropReplies: (value) => void (dropReplies = value),
  };
}
