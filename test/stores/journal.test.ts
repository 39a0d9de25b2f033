import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll } from 'vitest';

import { MemoryStore } from '../../src/stores/memory/index.js';
import { PostgresStore } from '../../src/stores/postgres/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { requireService } from '../helpers/services.js';
import { tempDir } from '../helpers/tmp.js';
import { stepContract } from './stepContract.js';

const open = async <T extends { init(): Promise<void>; journal?: { init(): Promise<void> } }>(store: T): Promise<T> => {
  await store.init();
  await store.journal?.init();
  return store;
};

stepContract('memory', { create: () => open(new MemoryStore()) });

const paths = new WeakMap<object, string>();
stepContract('sqlite', {
  async create() {
    const path = join(tempDir(), 'journal.db');
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
  stepContract('postgres', {
    create: () => {
      const schema = `mcp_tasks_journal_${randomUUID().replace(/-/g, '')}`;
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
  stepContract('redis', {
    create: () => {
      const prefix = `mcp-tasks-journal:${randomUUID()}:`;
      prefixes.push(prefix);
      return openRedis(prefix);
    },
    sibling: (store) => openRedis(prefixOf.get(store) as string),
  });
}
