import type pg from 'pg';

import { reconnectDelayMs } from '../../engine/index.js';

type ConnectCallback = (error: Error | undefined, client: pg.PoolClient | undefined, done: () => void) => void;

/**
 * Makes `pool` try a failed connection again (every `reconnectDelayMs`) for up to `waitMs`, so a statement rides out
 * a PostgreSQL restart shorter than that as a Redis command does (STORE_WAIT_MS), instead of failing at once. Only
 * connecting is retried: a statement is sent once it has a connection, so one refused after the wait was never sent.
 */
export function waitForConnection(pool: pg.Pool, waitMs: number): void {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const patient = async (): Promise<pg.PoolClient> => {
    const deadline = Date.now() + waitMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await connect();
      } catch (error) {
        const delay = reconnectDelayMs(attempt);
        if (pool.ending || Date.now() + delay >= deadline) {
          throw new NotConnectedError(error instanceof Error ? error.message : String(error), { cause: error });
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  };
  // pg-pool's own query() calls connect with a callback; callers of the pool use the promise.
  pool.connect = ((callback?: ConnectCallback) => {
    if (!callback) return patient();
    patient().then(
      (client) => callback(undefined, client, () => client.release()),
      (error: Error) => callback(error, undefined, () => {}),
    );
    return undefined;
  }) as pg.Pool['connect'];
}

/** No connection came within the wait: the statement that asked for one was never sent. */
export class NotConnectedError extends Error {
  override readonly name = 'NotConnectedError';
}
