import { randomUUID } from 'node:crypto';

import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

import { PostgresStore } from '../../src/stores/postgres/index.js';
import { createUnderLock } from '../../src/stores/postgres/pgSchemaLock.js';
import { requireService } from '../helpers/services.js';
import { untilWaitingOn } from './pgLockWaits.js';

const url = requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL');

/** Rejects if `work` is still pending after `ms`: the work is waiting on a lock it should never take. */
function settlesWithin<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still waiting after ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

if (url) {
  const admin = new pg.Pool({ connectionString: url, max: 4 });
  const schemas: string[] = [];
  const newSchema = async () => {
    const schema = `mcp_tasks_test_${randomUUID().replace(/-/g, '')}`;
    schemas.push(schema);
    await admin.query(`CREATE SCHEMA ${schema}`);
    return schema;
  };
  afterAll(async () => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  describe('PostgreSQL schema parts beside running instances (a real server)', () => {
    it('an instance starting while others hold its tables in use takes no lock on them', async () => {
      const schema = await newSchema();
      const first = new PostgresStore({ connectionString: url, schema, poolSize: 2 });
      const parts = (store: PostgresStore) => [
        store.journal,
        store.timeline,
        store.eventLog,
        store.eventStreams,
        store.webhooks,
        store.browse,
      ];
      await first.init();
      for (const part of parts(first)) await part.init();
      // Live traffic: a transaction writing to every table of the schema, left open while the next instance starts.
      // CREATE INDEX IF NOT EXISTS and ALTER TABLE would wait for it (and, with its next write, deadlock).
      const busy = await admin.connect();
      const second = new PostgresStore({ connectionString: url, schema, poolSize: 2 });
      try {
        await busy.query('BEGIN');
        const { rows } = await busy.query<{ name: string }>(
          `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = $1`,
          [schema],
        );
        expect(rows.length).toBeGreaterThanOrEqual(9);
        for (const { name } of rows) await busy.query(`LOCK TABLE ${schema}.${name} IN ROW EXCLUSIVE MODE`);
        await settlesWithin(
          (async () => {
            await second.init();
            for (const part of parts(second)) await part.init();
          })(),
          10_000,
          'the second instance start',
        );
      } finally {
        await busy.query('ROLLBACK');
        busy.release();
        await second.close();
        await first.close();
      }
    });

    it('creates a part once and, when its DDL deadlocks with live traffic, tries again', async () => {
      const schema = await newSchema();
      const marks = `${schema}.parts_ddl`;
      await admin.query(`CREATE TABLE ${schema}.t1 (a int); CREATE TABLE ${schema}.t2 (a int)`);
      const ddl = `ALTER TABLE ${schema}.t1 ADD COLUMN IF NOT EXISTS b int;
                   CREATE INDEX IF NOT EXISTS t2_a ON ${schema}.t2 (a)`;
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      const traffic = await admin.connect();
      try {
        // The traffic's transaction holds t2, then wants t1, which the DDL holds while it waits for t2. Only the DDL's
        // session looks for the deadlock in time (the traffic's deadlock_timeout is long), so the DDL is the one cut.
        await traffic.query('BEGIN');
        await traffic.query(`SET LOCAL deadlock_timeout = '60s'`);
        await traffic.query(`LOCK TABLE ${schema}.t2 IN ROW EXCLUSIVE MODE`);
        const creating = createUnderLock(pool, marks, ddl);
        await untilWaitingOn(admin, `${schema}.t2`);
        await traffic.query(`LOCK TABLE ${schema}.t1 IN ROW EXCLUSIVE MODE`);
        await traffic.query('COMMIT');
        await settlesWithin(creating, 20_000, 'the DDL after a deadlock');
        const column = await admin.query(
          `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 't1' AND column_name = 'b'`,
          [schema],
        );
        expect(column.rowCount).toBe(1);
        expect((await admin.query(`SELECT to_regclass($1) AS i`, [`${schema}.t2_a`])).rows[0].i).not.toBeNull();
        expect((await admin.query(`SELECT count(*)::int AS n FROM ${marks}`)).rows[0].n).toBe(1);

        // Applied once: the same DDL again neither runs nor waits, even with its tables locked against everyone.
        await traffic.query('BEGIN');
        await traffic.query(`LOCK TABLE ${schema}.t1, ${schema}.t2 IN ACCESS EXCLUSIVE MODE`);
        await settlesWithin(createUnderLock(pool, marks, ddl), 10_000, 'an applied DDL');
        await traffic.query('COMMIT');
      } finally {
        await traffic.query('ROLLBACK').catch(() => undefined);
        traffic.release();
        await pool.end();
      }
    });
  });
}
