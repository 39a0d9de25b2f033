import type pg from 'pg';

import type { PgNames } from './pgNames.js';

const ACTIVE = `status IN ('working', 'input_required')`;

/**
 * Schema migrations, applied in order; the migrations table records which ran. Never edit a released step.
 * task_id is COLLATE "C" so the keyset order (createdAt, taskId) is byte order whatever the database locale.
 * data is `json`, not `jsonb`: it keeps the stored text exactly and accepts \u0000 inside strings.
 */
export const POSTGRES_MIGRATIONS: ReadonlyArray<(n: PgNames) => string> = [
  (n) => `
  CREATE TABLE ${n.tasks} (
    task_id TEXT COLLATE "C" PRIMARY KEY,
    owner TEXT COLLATE "C" NOT NULL,
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    idempotency_key TEXT COLLATE "C",
    runner TEXT COLLATE "C",
    lease_until BIGINT,
    version BIGINT NOT NULL,
    data JSON NOT NULL
  );
  CREATE INDEX ${n.index('owner_created')} ON ${n.tasks} (owner, created_at DESC, task_id DESC);
  CREATE UNIQUE INDEX ${n.index('owner_key')} ON ${n.tasks} (owner, idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX ${n.index('expires')} ON ${n.tasks} (expires_at) WHERE expires_at IS NOT NULL;
  CREATE INDEX ${n.index('lease')} ON ${n.tasks} (lease_until) WHERE lease_until IS NOT NULL AND ${ACTIVE};
  CREATE INDEX ${n.index('active_owner')} ON ${n.tasks} (owner) WHERE ${ACTIVE};
  CREATE INDEX ${n.index('runner')} ON ${n.tasks} (runner) WHERE lease_until IS NOT NULL AND ${ACTIVE};
  CREATE TABLE ${n.meta} (key TEXT PRIMARY KEY, value BYTEA NOT NULL);
  `,
];

/** One lock for every mcp-tasks migration in a database: concurrent starts (any schema) run them one at a time. */
const MIGRATION_LOCK = '7265139183920410391';

/** Applies the missing steps in one transaction under an advisory lock, so processes starting together are safe. */
export async function migratePostgres(pool: pg.Pool, names: PgNames, rawSchema: string): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK]);
    const schema = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [rawSchema]);
    // Only create a missing schema: CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege.
    if (schema.rowCount === 0) await client.query(`CREATE SCHEMA ${names.schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${names.migrations} (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ v: number }>(
      `SELECT coalesce(max(version), 0)::int AS v FROM ${names.migrations}`,
    );
    for (let version = rows[0]?.v ?? 0; version < POSTGRES_MIGRATIONS.length; version++) {
      await client.query((POSTGRES_MIGRATIONS[version] as (n: PgNames) => string)(names));
      await client.query(`INSERT INTO ${names.migrations} (version) VALUES ($1)`, [version + 1]);
    }
    await client.query('COMMIT');
  } catch (error) {
    // A connection that cannot even roll back is discarded rather than returned to the pool.
    await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}
