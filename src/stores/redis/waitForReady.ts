import type { Command, Redis } from 'ioredis';

import { OutcomeUnknownError } from '../../engine/index.js';

/** Commands ioredis itself sends while connecting (before 'ready'): they must not wait for it. */
const HANDSHAKE = new Set(['auth', 'hello', 'select', 'info', 'client', 'readonly', 'ping', 'cluster']);

/**
 * Makes `redis` (created with `enableOfflineQueue: false`, `autoResendUnfulfilledCommands: false`) hold each command
 * until the connection is ready, for at most `waitMs`, and then refuse it unsent. ioredis's offline
 * queue would instead send a command whenever the connection came back, long after its caller gave up: a creation
 * refused to the requestor could be stored later (a phantom task). A command is therefore either sent while its
 * caller still waits, or never.
 *
 * Commands sent on a connection that then drops fail with ConnectionLostError: without resending, ioredis forgets
 * them and their callers would wait forever. Such a command may or may not have been applied; the caller decides.
 */
export function waitForReady(redis: Redis, waitMs: number): void {
  const send = redis.sendCommand.bind(redis);
  const inFlight = new Set<Command>();
  const track = (command: Command): void => {
    inFlight.add(command);
    const settled = () => inFlight.delete(command);
    command.promise.then(settled, settled);
  };
  redis.on('close', () => {
    const lost = [...inFlight];
    inFlight.clear();
    for (const command of lost) command.reject(new ConnectionLostError());
  });
  redis.sendCommand = ((command, stream) => {
    if (redis.status === 'ready' || stream !== undefined || HANDSHAKE.has(command.name.toLowerCase())) {
      track(command);
      return send(command, stream);
    }
    ready(redis, waitMs).then(
      () => {
        track(command);
        void send(command);
      },
      (error: unknown) => command.reject(error as Error),
    );
    return command.promise;
  }) as Redis['sendCommand'];
}

/** A command's connection dropped after it was sent: its reply, and whether Redis applied it, are unknown. */
export class ConnectionLostError extends OutcomeUnknownError {
  override readonly name = 'ConnectionLostError';
  constructor() {
    super('The Redis connection was lost after the command was sent; whether it was applied is unknown');
  }
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
