import type pg from 'pg';

import { quoteLiteral, type PgNames } from './pgNames.js';
import { inLockedTransaction, retryingLockConflicts } from './pgSchemaLock.js';

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
  // Stored tasks per owner, counted by a trigger on every insert and delete (sweeps included), so the stored-task cap
  // reads one row instead of counting the owner's tasks.
  (n) => `
  CREATE TABLE ${n.owners} (owner TEXT COLLATE "C" PRIMARY KEY, stored BIGINT NOT NULL);
  INSERT INTO ${n.owners} (owner, stored) SELECT owner, count(*) FROM ${n.tasks} GROUP BY owner;
  CREATE FUNCTION ${n.qualified('count_owner')}() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO ${n.owners} AS o (owner, stored) VALUES (NEW.owner, 1)
        ON CONFLICT (owner) DO UPDATE SET stored = o.stored + 1;
      RETURN NEW;
    END IF;
    UPDATE ${n.owners} SET stored = stored - 1 WHERE owner = OLD.owner;
    RETURN OLD;
  END $$;
  CREATE TRIGGER ${n.index('count_owner')} AFTER INSERT OR DELETE ON ${n.tasks}
    FOR EACH ROW EXECUTE FUNCTION ${n.qualified('count_owner')}();
  CREATE FUNCTION ${n.qualified('insert_capped')}(
    p_task_id TEXT, p_owner TEXT, p_status TEXT, p_created_at BIGINT, p_expires_at BIGINT, p_key TEXT, p_runner TEXT,
    p_lease_until BIGINT, p_version BIGINT, p_data JSON, p_max_active BIGINT, p_max_stored BIGINT
  ) RETURNS TEXT LANGUAGE plpgsql AS $$
  BEGIN
    -- One lock per (table, owner) held to the commit: an owner's capped inserts count one at a time in every process,
    -- and each statement below (a fresh snapshot under READ COMMITTED) sees what the previous holder committed.
    PERFORM pg_advisory_xact_lock(hashtext(${quoteLiteral(n.tasks)}), hashtext(p_owner));
    IF p_max_active IS NOT NULL
       AND (SELECT count(*) FROM ${n.tasks} WHERE owner = p_owner AND ${ACTIVE}) >= p_max_active THEN
      RETURN 'active';
    END IF;
    IF p_max_stored IS NOT NULL
       AND coalesce((SELECT stored FROM ${n.owners} WHERE owner = p_owner), 0) >= p_max_stored THEN
      RETURN 'stored';
    END IF;
    INSERT INTO ${n.tasks} (task_id, owner, status, created_at, expires_at, idempotency_key, runner, lease_until, version, data)
      VALUES (p_task_id, p_owner, p_status, p_created_at, p_expires_at, p_key, p_runner, p_lease_until, p_version, p_data)
      ON CONFLICT DO NOTHING;
    IF FOUND THEN RETURN 'ok'; END IF;
    RETURN 'conflict';
  END $$;
  `,
  // The console's tool and generation filters read an index: the tool called and the wire generation, set by a
  // trigger at insert only (they never change), so updates of a task touch neither column.
  (n) => `
  ALTER TABLE ${n.tasks} ADD COLUMN tool TEXT COLLATE "C", ADD COLUMN dialect TEXT COLLATE "C";
  CREATE FUNCTION ${n.qualified('browse_columns')}() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    NEW.tool := CASE WHEN json_typeof(NEW.data->'request'->'params'->'name') = 'string'
                     THEN NEW.data->'request'->'params'->>'name' END;
    NEW.dialect := NEW.data->>'dialect';
    RETURN NEW;
  END $$;
  CREATE TRIGGER ${n.index('browse_columns')} BEFORE INSERT ON ${n.tasks}
    FOR EACH ROW EXECUTE FUNCTION ${n.qualified('browse_columns')}();
  UPDATE ${n.tasks} SET
    tool = CASE WHEN json_typeof(data->'request'->'params'->'name') = 'string' THEN data->'request'->'params'->>'name' END,
    dialect = data->>'dialect';
  CREATE INDEX ${n.index('tool_created')} ON ${n.tasks} (tool, created_at DESC, task_id DESC);
  CREATE INDEX ${n.index('dialect_created')} ON ${n.tasks} (dialect, created_at DESC, task_id DESC);
  `,
  // Room at the stored-task bounds: when each task's outcome was delivered (fetched tasks are evicted first, earliest
  // fetched first, over these indexes), and the bytes of stored records per owner. Inserts and deletes count bytes
  // in the row trigger; updates in one statement trigger per statement, which locks the owners' rows in owner order
  // (as batched inserts take their locks), so concurrent batches never deadlock on them. insert_bounded is
  // insert_capped with the byte cap; the old function stays for processes of the previous version.
  (n) => `
  ALTER TABLE ${n.tasks} ADD COLUMN fetched_at BIGINT;
  CREATE INDEX ${n.index('owner_fetched')} ON ${n.tasks} (owner, fetched_at) WHERE fetched_at IS NOT NULL;
  CREATE INDEX ${n.index('fetched')} ON ${n.tasks} (fetched_at) WHERE fetched_at IS NOT NULL;
  ALTER TABLE ${n.owners} ADD COLUMN bytes BIGINT NOT NULL DEFAULT 0;
  UPDATE ${n.owners} o SET bytes = coalesce((SELECT sum(octet_length(t.data::text)) FROM ${n.tasks} t WHERE t.owner = o.owner), 0);
  CREATE OR REPLACE FUNCTION ${n.qualified('count_owner')}() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      INSERT INTO ${n.owners} AS o (owner, stored, bytes) VALUES (NEW.owner, 1, octet_length(NEW.data::text))
        ON CONFLICT (owner) DO UPDATE SET stored = o.stored + 1, bytes = o.bytes + excluded.bytes;
      RETURN NEW;
    END IF;
    UPDATE ${n.owners} SET stored = stored - 1, bytes = bytes - octet_length(OLD.data::text) WHERE owner = OLD.owner;
    RETURN OLD;
  END $$;
  CREATE FUNCTION ${n.qualified('count_bytes')}() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM 1 FROM ${n.owners} o
      WHERE o.owner IN (SELECT n.owner FROM new_rows n JOIN old_rows p USING (task_id)
                        WHERE octet_length(n.data::text) <> octet_length(p.data::text))
      ORDER BY o.owner FOR UPDATE;
    UPDATE ${n.owners} o SET bytes = o.bytes + d.delta
      FROM (SELECT n.owner, sum(octet_length(n.data::text) - octet_length(p.data::text)) AS delta
            FROM new_rows n JOIN old_rows p USING (task_id) GROUP BY n.owner) d
      WHERE o.owner = d.owner AND d.delta <> 0;
    RETURN NULL;
  END $$;
  CREATE TRIGGER ${n.index('count_bytes')} AFTER UPDATE ON ${n.tasks}
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION ${n.qualified('count_bytes')}();
  CREATE FUNCTION ${n.qualified('insert_bounded')}(
    p_task_id TEXT, p_owner TEXT, p_status TEXT, p_created_at BIGINT, p_expires_at BIGINT, p_key TEXT, p_runner TEXT,
    p_lease_until BIGINT, p_version BIGINT, p_data JSON, p_max_active BIGINT, p_max_stored BIGINT, p_max_bytes BIGINT
  ) RETURNS TEXT LANGUAGE plpgsql AS $$
  BEGIN
    -- As insert_capped: the owner's lock to the commit, then each cap on a fresh snapshot.
    PERFORM pg_advisory_xact_lock(hashtext(${quoteLiteral(n.tasks)}), hashtext(p_owner));
    IF p_max_active IS NOT NULL
       AND (SELECT count(*) FROM ${n.tasks} WHERE owner = p_owner AND ${ACTIVE}) >= p_max_active THEN
      RETURN 'active';
    END IF;
    IF p_max_stored IS NOT NULL
       AND coalesce((SELECT stored FROM ${n.owners} WHERE owner = p_owner), 0) >= p_max_stored THEN
      RETURN 'stored';
    END IF;
    IF p_max_bytes IS NOT NULL
       AND coalesce((SELECT bytes FROM ${n.owners} WHERE owner = p_owner), 0) >= p_max_bytes THEN
      RETURN 'stored_bytes';
    END IF;
    INSERT INTO ${n.tasks} (task_id, owner, status, created_at, expires_at, idempotency_key, runner, lease_until, version, data)
      VALUES (p_task_id, p_owner, p_status, p_created_at, p_expires_at, p_key, p_runner, p_lease_until, p_version, p_data)
      ON CONFLICT DO NOTHING;
    IF FOUND THEN RETURN 'ok'; END IF;
    RETURN 'conflict';
  END $$;
  `,
];

/** One lock for every mcp-tasks migration in a database: concurrent starts (any schema) run them one at a time. */
const MIGRATION_LOCK = '7265139183920410391';

/**
 * Applies the missing steps in one transaction under an advisory lock, so processes starting together are safe. A
 * step that alters the tasks table beside running instances of an older release may deadlock with their writes; the
 * whole transaction is then tried again.
 */
export function migratePostgres(pool: pg.Pool, names: PgNames, rawSchema: string): Promise<void> {
  return retryingLockConflicts(() => migrateOnce(pool, names, rawSchema));
}

async function migrateOnce(pool: pg.Pool, names: PgNames, rawSchema: string): Promise<void> {
  await inLockedTransaction(pool, MIGRATION_LOCK, async (client) => {
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
  });
}
