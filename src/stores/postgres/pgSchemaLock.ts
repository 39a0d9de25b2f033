import { createHash } from 'node:crypto';

import type pg from 'pg';

import { quoteIdent } from './pgNames.js';

/** One lock for every part's DDL (and the marks table they share), so parts created together never race. */
const PARTS_LOCK = '7265139183920410392';

/** Lock conflicts worth another try: a deadlock with live traffic, a lock wait cut short, a serialization failure. */
const RETRIED = new Set(['40P01', '55P03', '40001']);
const ATTEMPTS = 5;

/**
 * Creates a part of the schema (`ddl`: CREATE ... IF NOT EXISTS statements) once per schema. A DDL text already
 * applied, found in the `marks` table (schema-qualified, quoted), costs one read and takes no lock: CREATE INDEX IF NOT
 * EXISTS and ALTER TABLE lock their table even when there is nothing to do, and taken in an order of their own against
 * running instances' transactions that deadlocks (an instance starting beside busy ones failed its start that way).
 * Otherwise the DDL runs in one transaction under an advisory lock, so instances starting together do not race on
 * CREATE ... IF NOT EXISTS (which is not safe against a concurrent creator), and a deadlock is tried again.
 */
export async function createUnderLock(pool: pg.Pool, marks: string, ddl: string): Promise<void> {
  const digest = createHash('sha256').update(ddl).digest('hex');
  if (await marked(pool, marks, digest)) return;
  await retryingLockConflicts(() => applyOnce(pool, marks, ddl, digest));
}

/** Runs a DDL transaction again (up to 5 times) when it lost a lock conflict with running transactions. */
export async function retryingLockConflicts(transaction: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (error) {
      if (attempt >= ATTEMPTS || !RETRIED.has(codeOf(error))) throw error;
      // The other side of a deadlock is usually a short transaction; let it finish first.
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 100));
    }
  }
}

async function marked(pool: pg.Pool, marks: string, digest: string): Promise<boolean> {
  try {
    const result = await pool.query(`SELECT 1 FROM ${marks} WHERE digest = $1`, [digest]);
    return result.rowCount === 1;
  } catch (error) {
    // No marks table (or schema) yet: a first start, created below under the lock.
    if (codeOf(error) === '42P01' || codeOf(error) === '3F000') return false;
    throw error;
  }
}

function applyOnce(pool: pg.Pool, marks: string, ddl: string, digest: string): Promise<void> {
  return inLockedTransaction(pool, PARTS_LOCK, async (client) => {
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${marks} (digest TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const done = await client.query(`SELECT 1 FROM ${marks} WHERE digest = $1`, [digest]);
    if (done.rowCount === 0) {
      await client.query(ddl);
      await client.query(`INSERT INTO ${marks} (digest) VALUES ($1)`, [digest]);
    }
  });
}

/** Runs `work` in one transaction that holds the advisory lock `lock` until it commits (or rolls back). */
export async function inLockedTransaction(
  pool: pg.Pool,
  lock: string,
  work: (client: pg.PoolClient) => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [lock]);
    await work(client);
    await client.query('COMMIT');
  } catch (error) {
    // A connection that cannot even roll back is discarded rather than returned to the pool.
    await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** The marks table of a store's schema parts: beside its tables, named like them (`pgNames(...).qualified('ddl')`). */
export function ddlMarks(schema: string, tablePrefix: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(`${tablePrefix}_ddl`)}`;
}
