import type { TaskStore } from '../../src/engine/index.js';

/**
 * A real store behind a switch: while `down`, every call fails as a refused connection does; while `dropReplies`,
 * every `replace` (an update) is applied and then fails as a connection lost before its reply does; once
 * `loseReadAfterWrite` is armed, the first `get` after the next applied `replace` fails that way (once). Its change
 * events still flow.
 */
export function switchable(store: TaskStore): {
  store: TaskStore;
  setDown(down: boolean): void;
  setDropReplies(drop: boolean): void;
  loseReadAfterWrite(): void;
} {
  let down = false;
  let dropReplies = false;
  let armed = false;
  let loseRead = false;
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function' || key === 'events') return value;
      return async (...args: unknown[]) => {
        if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        if (key === 'get' && loseRead) {
          loseRead = false;
          throw new Error('Connection lost before the reply');
        }
        const result: unknown = await (value as (...a: unknown[]) => unknown).apply(target, args);
        if (key === 'replace' && armed && result === true) [armed, loseRead] = [false, true];
        if (dropReplies && key === 'replace') throw new Error('Connection lost before the reply');
        return result;
      };
    },
  });
  return {
    store: proxy,
    setDown: (value) => void (down = value),
    setDropReplies: (value) => void (dropReplies = value),
    loseReadAfterWrite: () => void (armed = true),
  };
}
