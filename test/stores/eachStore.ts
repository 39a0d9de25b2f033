import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeEach } from 'vitest';

import type { TaskStore } from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { requireService } from '../helpers/services.js';
import { tempDir } from '../helpers/tmp.js';

export interface EachStoreHarness {
  /** A fresh, empty store, opened with `open`. */
  create(): Promise<TaskStore>;
  /** A second store instance on the same backend as `store` (another process would see the same); not for memory. */
  sibling?(store: TaskStore): Promise<TaskStore>;
}

/**
 * Registers `suite` once per store (memory, SQLite, and PostgreSQL and Redis when their services are up), each on
 * a fresh schema, prefix or file that is dropped afterwards. `open` initialises what the suite needs.
 */
export function eachStore(
  label: string,
  open: (store: TaskStore) => Promise<TaskStore>,
  suite: (name: string, harness: EachStoreHarness) => void,
): void {
  suite('memory', { create: () => open(new MemoryStore()) });

  const paths = new WeakMap<object, string>();
  suite('sqlite', {
    async create() {
      const path = join(tempDir(), `${label}.db`);
      const store = await open(new SqliteStore({ path }));
      paths.set(store, path);
      return store;
    },
    sibling: async (store) => open(new SqliteStore({ path: paths.get(store) as string })),
  });

  const pgUrl = requireService('PostgreSQL', 'MCP_TASKS_TEST_POSTGRES_URL');
  if (pgUrl) {
    const admin = new pg.Pool({ connectionString: pgUrl, max: 1 });
    const schemas: string[] = [];
    const schemaOf = new WeakMap<object, string>();
    afterAll(async () => {
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    });
    const openPg = async (schema: string) => {
      const store = await open(new PostgresStore({ connectionString: pgUrl, schema, poolSize: 4 }));
      schemaOf.set(store, schema);
      return store;
    };
    suite('postgres', {
      create: () => {
        const schema = `mcp_tasks_${label}_${randomUUID().replace(/-/g, '')}`;
        schemas.push(schema);
        return openPg(schema);
      },
      sibling: (store) => openPg(schemaOf.get(store) as string),
    });
  }

  const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');
  if (redisUrl) {
    const admin = new Redis(redisUrl);
    const prefixes: string[] = [];
    const prefixOf = new WeakMap<object, string>();
    afterAll(async () => {
      for (const prefix of prefixes) {
        const keys = await admin.keys(`${prefix}*`);
        if (keys.length > 0) await admin.del(...keys);
      }
      await admin.quit();
    });
    const openRedis = async (keyPrefix: string) => {
      const store = await open(new RedisStore({ url: redisUrl, keyPrefix }));
      prefixOf.set(store, keyPrefix);
      return store;
    };
    suite('redis', {
      create: () => {
        const prefix = `mcp-tasks-${label}:${randomUUID()}:`;
        prefixes.push(prefix);
        return openRedis(prefix);
      },
      sibling: (store) => openRedis(prefixOf.get(store) as string),
    });
  }
}

/**
 * Opens a fresh store from `harness` before each test (handed to `onOpen`) and closes it after, with every store the
 * test adds to the returned list (siblings it opened).
 */
export function storePerTest(
  harness: { create(): Promise<TaskStore> },
  onOpen: (store: TaskStore) => void,
): TaskStore[] {
  const opened: TaskStore[] = [];
  beforeEach(async () => {
    const store = await harness.create();
    opened.push(store);
    onOpen(store);
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  return opened;
}
