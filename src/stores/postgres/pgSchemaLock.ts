import type pg from 'pg';

/**
 * Runs `ddl` (SQL, or queries on the transaction's client) in one transaction under an advisory lock, so instances
 * starting together do not race on CREATE ... IF NOT EXISTS (which is not safe against a concurrent creator).
 */
export async function createUnderLock(
  pool: pg.Pool,
  lock: string,
  ddl: string | ((client: pg.PoolClient) => Promise<void>),
): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [lock]);
    if (typeof ddl === 'string') await client.query(ddl);
    else await ddl(client);
    await client.query('COMMIT');
  } catch (error) {
    // A connection that cannot even roll back is discarded rather than returned to the pool.
    await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}
