import type { Redis } from 'ioredis';

/** Commands ioredis itself sends while connecting (before 'ready'): they must not wait for it. */
const HANDSHAKE = new Set(['auth', 'hello', 'select', 'info', 'client', 'readonly', 'ping', 'cluster']);

/**
 * Makes `redis` (created with `enableOfflineQueue: false`) hold each command until the connection is ready, for at
 * most `waitMs`, and then refuse it unsent. ioredis's offline queue would instead send a command whenever the
 * connection came back, long after its caller gave up: a creation refused to the requestor could be stored later
 * (a phantom task). A command is therefore either sent while its caller still waits, or never.
 */
export function waitForReady(redis: Redis, waitMs: number): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command, stream) => {
    if (redis.status === 'ready' || stream !== undefined || HANDSHAKE.has(command.name.toLowerCase())) {
      return send(command, stream);
    }
    ready(redis, waitMs).then(
      () => void send(command),
      (error: unknown) => command.reject(error as Error),
    );
    return command.promise;
  }) as Redis['sendCommand'];
}

/** One wait for the connection per client and outage, however many commands wait on it (one pair of listeners). */
const readiness = new WeakMap<Redis, Promise<void>>();

function ready(redis: Redis, waitMs: number): Promise<void> {
  if (redis.status === 'end') return Promise.reject(new Error('Connection is closed.'));
  if (redis.status === 'wait') redis.connect().catch(() => {});
  let shared = readiness.get(redis);
  if (!shared) {
    shared = new Promise<void>((resolve, reject) => {
      const onReady = () => {
        redis.off('end', onEnd);
        resolve();
      };
      const onEnd = () => {
        redis.off('ready', onReady);
        reject(new Error('Connection is closed.'));
      };
      redis.once('ready', onReady);
      redis.once('end', onEnd);
    });
    const settled = shared;
    readiness.set(redis, settled);
    const forget = () => {
      if (readiness.get(redis) === settled) readiness.delete(redis);
    };
    settled.then(forget, forget);
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Redis did not answer within ${waitMs} ms (not connected); the command was not sent`)),
      waitMs,
    );
  });
  return Promise.race([shared, timeout]).finally(() => clearTimeout(timer));
}
