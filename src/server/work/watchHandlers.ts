import { isObject, type RequestId } from '../../rpc/index.js';
import type { ServerLike } from '../ServerLike.js';

type Handler = (request: { id?: RequestId }, ...rest: unknown[]) => unknown;
type Listener = (id: RequestId, settled: Promise<void>) => void;

/** The listener of each handler map already watched: watching it again replaces the listener, never stacks wrappers. */
const listeners = new WeakMap<Map<string, Handler>, Listener>();

/**
 * Hears when the author's handler of each request really settles. The SDK sends no response for a cancelled request,
 * so without this a call told to stop looks ended at once, although a handler that ignores its abort signal goes on.
 *
 * Both SDK generations keep their request handlers in a `Map` named `_requestHandlers` on the protocol object (the
 * `Server`, or an `McpServer`'s `server`) and look a handler up per request: the lookup on this one instance hands out
 * the handler wrapped. Returns false, changing nothing, where that map is not found.
 */
export function watchHandlers(instance: ServerLike, onHandling: Listener): boolean {
  const inner = (instance as { server?: unknown }).server;
  const protocol: unknown = isObject(inner) ? inner : instance;
  const handlers: unknown = isObject(protocol) ? protocol['_requestHandlers'] : undefined;
  if (!(handlers instanceof Map)) return false;
  const map = handlers as Map<string, Handler>;
  const watched = listeners.has(map);
  listeners.set(map, onHandling);
  if (watched) return true;
  const get = map.get.bind(map);
  map.get = (method: string) => {
    const handler = get(method);
    if (typeof handler !== 'function') return handler;
    return (request, ...rest) => {
      // Called at once, as the SDK would: only the settling is added.
      let result: Promise<unknown>;
      try {
        result = Promise.resolve(handler(request, ...rest));
      } catch (error) {
        result = Promise.reject(error);
      }
      if (request.id !== undefined)
        listeners.get(map)?.(
          request.id,
          result.then(
            () => undefined,
            () => undefined,
          ),
        );
      return result;
    };
  };
  return true;
}
