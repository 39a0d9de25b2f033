import type pg from 'pg';

import { waitUntil } from './storeContract.js';

/** Resolves once some session waits for a lock on `relation` (schema-qualified): the setup of a deadlock test. */
export function untilWaitingOn(admin: pg.Pool, relation: string): Promise<void> {
  return waitUntil(async () => {
    const waiting = await admin.query(`SELECT 1 FROM pg_locks WHERE relation = $1::regclass AND NOT granted`, [
      relation,
    ]);
    return waiting.rowCount === 1;
  });
}
