import { randomUUID } from 'node:crypto';

import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { TaskEngine, type TaskRecord, type TaskStore } from '../../src/engine/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { makeRecord } from '../helpers/records.js';
import { requireService } from '../helpers/services.js';
import { untilWaitingOn } from './pgLockWaits.js';
import { storeContract, waitUntil } from './storeContract.js';

const url = requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL');

if (url) {
  // Each store gets its own schema, so every test starts empty; all of them are dropped at the end.
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  const schemas: string[] = [];
  const schemaOf = new WeakMap<TaskStore, string>();

  const newSchema = () => {
    const schema = `mcp_tasks_test_${randomUUID().replace(/-/g, '')}`;
    schemas.push(schema);
    return schema;
  };
  const open = async (schema: string): Promise<PostgresStore> => {
    const store = new PostgresStore({ connectionString: url, schema, poolSize: 4 });
    await store.init();
    schemaOf.set(store, schema);
    return store;
  };

  afterAll(async () => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  storeContract('postgres', {
    async create() {
      const schema = newSchema();
      await admin.query(`CREATE SCHEMA ${schema}`);
      return open(schema);
    },
    async sibling(store) {
      return open(schemaOf.get(store) as string);
    },
    carriesEvents: true,
  });

  describe('PostgresStore on a real server', () => {
    const opened: Array<{ close(): Promise<void> }> = [];
    const track = <T extends { close(): Promise<void> }>(value: T): T => {
      opened.push(value);
      return value;
    };
    afterEach(async () => {
      for (const item of opened.splice(0)) await item.close();
    });

    it('counts the tasks already stored when the per-owner counter is added to an existing table', async () => {
      const schema = newSchema();
      const before = track(new PostgresStore({ connectionString: url, schema }));
      await before.init();
      const stored = [
        ...Array.from({ length: 3 }, () => makeRecord({ status: 'completed' })),
        makeRecord({ owner: 'owner-b' }),
      ];
      for (const record of stored) await before.insert(record);
      // Back to the first schema version, as a table created before the counter existed.
      await undoBrowseColumns(schema);
      await admin.query(`DROP TABLE ${schema}.mcp_tasks_owners`);
      await admin.query(`DROP TRIGGER mcp_tasks_count_owner ON ${schema}.mcp_tasks`);
      await admin.query(`DROP FUNCTION ${schema}.mcp_tasks_count_owner`);
      await admin.query(`DROP FUNCTION ${schema}.mcp_tasks_insert_capped`);
      await admin.query(`DELETE FROM ${schema}.mcp_tasks_migrations WHERE version >= 2`);
      const after = track(new PostgresStore({ connectionString: url, schema }));
      await after.init();
      expect(await after.insert(makeRecord(), { maxStored: 3 })).toEqual({
        inserted: false,
        reason: 'limit',
        limit: 'stored',
      });
      expect(await after.insert(makeRecord({ owner: 'owner-b' }), { maxStored: 3 })).toEqual({ inserted: true });
      // The byte counters start from the records already stored too.
      const bytes = (record: TaskRecord) => Buffer.byteLength(JSON.stringify(record), 'utf8');
      const sum = stored.filter((r) => r.owner === 'owner-a').reduce((total, r) => total + bytes(r), 0);
      expect(await after.insert(makeRecord(), { maxStored: 9, maxStoredBytes: sum })).toEqual({
        inserted: false,
        reason: 'limit',
        limit: 'stored_bytes',
      });
      expect(await after.insert(makeRecord(), { maxStored: 9, maxStoredBytes: sum + 1 })).toEqual({ inserted: true });
    });

    /** Back to the schema before the fetch mark and byte counters (migration 4). */
    async function undoFetched(schema: string): Promise<void> {
      const t = `${schema}.mcp_tasks`;
      await admin.query(`DROP TRIGGER mcp_tasks_count_bytes ON ${t}`);
      await admin.query(`DROP FUNCTION ${schema}.mcp_tasks_count_bytes, ${schema}.mcp_tasks_insert_bounded`);
      await admin.query(`ALTER TABLE ${t} DROP COLUMN fetched_at`);
      await admin.query(`ALTER TABLE ${schema}.mcp_tasks_owners DROP COLUMN bytes`);
      await admin.query(`CREATE OR REPLACE FUNCTION ${schema}.mcp_tasks_count_owner() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'INSERT' THEN
            INSERT INTO ${schema}.mcp_tasks_owners AS o (owner, stored) VALUES (NEW.owner, 1)
              ON CONFLICT (owner) DO UPDATE SET stored = o.stored + 1;
            RETURN NEW;
          END IF;
          UPDATE ${schema}.mcp_tasks_owners SET stored = stored - 1 WHERE owner = OLD.owner;
          RETURN OLD;
        END $$`);
      await admin.query(`DELETE FROM ${schema}.mcp_tasks_migrations WHERE version = 4`);
    }

    /** Back to the schema before the browse columns (migration 3). */
    async function undoBrowseColumns(schema: string): Promise<void> {
      await undoFetched(schema);
      await admin.query(`DROP TRIGGER mcp_tasks_browse_columns ON ${schema}.mcp_tasks`);
      await admin.query(`DROP FUNCTION ${schema}.mcp_tasks_browse_columns`);
      await admin.query(`ALTER TABLE ${schema}.mcp_tasks DROP COLUMN tool, DROP COLUMN dialect`);
      await admin.query(`DELETE FROM ${schema}.mcp_tasks_migrations WHERE version = 3`);
    }

    it('fills the browse columns of the tasks stored before they existed', async () => {
      const schema = newSchema();
      const before = track(new PostgresStore({ connectionString: url, schema }));
      await before.init();
      const old = makeRecord({ dialect: 'sep-1686' });
      await before.insert(old);
      await undoBrowseColumns(schema);
      const after = track(new PostgresStore({ connectionString: url, schema }));
      await after.init();
      await after.browse?.init();
      const fresh = makeRecord({ createdAt: old.createdAt - 1, dialect: 'sep-1686' });
      await after.insert(fresh);
      const found = await after.browse?.page({ tool: 'echo', dialect: 'sep-1686' }, { limit: 10, now: Date.now() });
      expect(found?.map((record) => record.taskId)).toEqual([old.taskId, fresh.taskId]);
    });

    it('applies migrations once when several instances start together on a new schema', async () => {
      const schema = newSchema();
      const stores = Array.from({ length: 4 }, () => track(new PostgresStore({ connectionString: url, schema })));
      await Promise.all(stores.map((store) => store.init()));
      const { rows } = await admin.query(`SELECT version FROM ${schema}.mcp_tasks_migrations ORDER BY version`);
      expect(rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }]);
      const secrets = await Promise.all(
        stores.map(async (store) => Buffer.from(await store.getSecret()).toString('hex')),
      );
      expect(new Set(secrets).size).toBe(1);
    });

    it('tries a migration again when it deadlocks with a running instance of the previous release', async () => {
      const schema = newSchema();
      const before = track(new PostgresStore({ connectionString: url, schema }));
      await before.init();
      await undoFetched(schema);
      // The running instance's transaction holds the owners table and then writes a task; the migration alters the
      // tasks table first, then the owners table. Only the migration's session looks for the deadlock in time.
      const running = await admin.connect();
      try {
        await running.query('BEGIN');
        await running.query(`SET LOCAL deadlock_timeout = '60s'`);
        await running.query(`LOCK TABLE ${schema}.mcp_tasks_owners IN ROW EXCLUSIVE MODE`);
        const after = track(new PostgresStore({ connectionString: url, schema }));
        const migrating = after.init();
        await untilWaitingOn(admin, `${schema}.mcp_tasks_owners`);
        await running.query(`LOCK TABLE ${schema}.mcp_tasks IN ROW EXCLUSIVE MODE`);
        await running.query('COMMIT');
        await migrating;
        const { rows } = await admin.query(`SELECT max(version)::int AS v FROM ${schema}.mcp_tasks_migrations`);
        expect(rows[0].v).toBe(4);
        expect(await after.insert(makeRecord(), { maxStoredBytes: 1 << 20 })).toEqual({ inserted: true });
      } finally {
        await running.query('ROLLBACK').catch(() => undefined);
        running.release();
      }
    });

    it('prepares its statements once per connection, and not at all with preparedStatements: false', async () => {
      const prepared = async (preparedStatements: boolean) => {
        // One connection, so the session's pg_prepared_statements is the store's.
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        track({ close: () => pool.end() });
        const store = new PostgresStore({ pool, schema: newSchema(), preparedStatements });
        await store.init();
        track(store);
        const record = makeRecord();
        await store.insert(record);
        for (let version = 1; version <= 3; version++) {
          expect((await store.get(record.taskId))?.version).toBe(version);
          expect(await store.replace({ ...record, version: version + 1 }, version)).toBe(true);
        }
        const { rows } = await pool.query<{ name: string; calls: string }>(
          `SELECT name, (generic_plans + custom_plans)::text AS calls FROM pg_prepared_statements
           WHERE name LIKE 'mcp_tasks_%'`,
        );
        return rows;
      };
      const named = await prepared(true);
      // insert, get and replace at least, each prepared once and run as often as it was called.
      expect(named.length).toBeGreaterThanOrEqual(3);
      expect(named.some((row) => Number(row.calls) >= 3)).toBe(true);
      expect(await prepared(false)).toEqual([]);
    });

    it('wakes a subscriber on a sibling instance', async () => {
      const schema = newSchema();
      const a = track(await open(schema));
      const b = track(await open(schema));
      let woken = 0;
      a.events.subscribe('task-x', () => woken++);
      await b.events.publish('task-x');
      await waitUntil(() => woken === 1);
    });

    it('does not wake subscribers of a store in another schema', async () => {
      const a = track(await open(newSchema()));
      const b = track(await open(newSchema()));
      let woken = 0;
      a.events.subscribe('task-y', () => woken++);
      await b.events.publish('task-y');
      await a.events.publish('task-z');
      // The publish on `a` went out after the one on `b`: once the listener has it, `b`'s would have arrived.
      let marker = false;
      a.events.subscribe('task-z', () => (marker = true));
      await a.events.publish('task-z');
      await waitUntil(() => marker);
      expect(woken).toBe(0);
    });

    it('keeps delivering events after its LISTEN connection is terminated', async () => {
      const schema = newSchema();
      const a = track(await open(schema));
      const b = track(await open(schema));
      const pid = a.events.backendPid;
      expect(pid).toBeTypeOf('number');
      let woken = 0;
      a.events.subscribe('task-r', () => woken++);
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      // Reconnected on a new backend; the reconnect itself wakes subscribers once (events may have been lost).
      await waitUntil(() => a.events.backendPid !== undefined && a.events.backendPid !== pid);
      await waitUntil(() => woken === 1);
      await b.events.publish('task-r');
      await waitUntil(() => woken === 2);
    });

    it('lets concurrent sweepers take disjoint batches', async () => {
      const schema = newSchema();
      const a = track(await open(schema));
      const b = track(await open(schema));
      const now = Date.now();
      const expired = Array.from({ length: 40 }, (_, i) => makeRecord({ expiresAt: now - 1000 + i }));
      for (const record of expired) await a.insert(record);
      const swept: string[] = [];
      await Promise.all(
        [a, b, a, b].map(async (store) => {
          for (;;) {
            const batch = await store.sweepExpired(now, 3);
            swept.push(...batch.map((r) => r.taskId));
            if (batch.length === 0) return;
          }
        }),
      );
      expect(swept.sort()).toEqual(expired.map((r) => r.taskId).sort());
    });

    it('wakes an engine waiting in one process when another finishes the task', async () => {
      const schema = newSchema();
      const options = { recheckIntervalMs: 60_000, sweepIntervalMs: 0, recoveryIntervalMs: 0 };
      const waiter = track(new TaskEngine({ store: await open(schema), ...options }));
      const worker = track(new TaskEngine({ store: await open(schema), ...options }));
      await waiter.start();
      await worker.start();
      const { task } = await waiter.create({ owner: 'o', request: { method: 'tools/call', params: {} }, dialect: 't' });
      const done = waiter.waitForTerminal(task.taskId);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      await worker.complete(task.taskId, { kind: 'result', result: { content: [] } });
      expect((await done)?.status).toBe('completed');
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });
}
