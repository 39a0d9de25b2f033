import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import pg from 'pg';

import { tempDir } from '../helpers/tmp.js';

/** A shared task store for one suite, isolated from every other suite and removed afterwards. */
export interface StoreBackend {
  readonly name: 'postgres' | 'redis' | 'sqlite';
  /** The `MCP_TASKS_STORE` spec every server and worker of the suite uses. */
  readonly spec: string;
  /** Whether the store's events cross processes (otherwise waiters notice changes at the re-check interval). */
  readonly crossProcessEvents: boolean;
  dispose(): Promise<void>;
}

/** A database of its own on the test PostgreSQL server. */
export async function postgresBackend(url: string): Promise<StoreBackend> {
  const name = `mcp_tasks_dist_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const spec = new URL(url);
  spec.pathname = `/${name}`;
  return {
    name: 'postgres',
    spec: spec.toString(),
    crossProcessEvents: true,
    async dispose() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A logical database of its own (`db`) on the test Redis server, emptied before and after. */
export async function redisBackend(url: string, db: number): Promise<StoreBackend> {
  const spec = new URL(url);
  spec.pathname = `/${db}`;
  const flush = async () => {
    const client = new Redis(spec.toString());
    await client.flushdb();
    await client.quit();
  };
  await flush();
  return { name: 'redis', spec: spec.toString(), crossProcessEvents: true, dispose: flush };
}

/** A SQLite file shared by the processes of one machine (changes wake other processes through its change signal). */
export async function sqliteBackend(): Promise<StoreBackend> {
  return { name: 'sqlite', spec: join(tempDir(), 'tasks.db'), crossProcessEvents: true, async dispose() {} };
}

/** A BullMQ queue name of its own, and the removal of its keys. */
export function isolatedQueue(redisUrl: string): { name: string; dispose(): Promise<void> } {
  const name = `mcp-tasks-test-${randomUUID().slice(0, 8)}`;
  return {
    name,
    async dispose() {
      const client = new Redis(redisUrl);
      const keys = await client.keys(`bull:${name}:*`);
      if (keys.length > 0) await client.del(...keys);
      await client.quit();
    },
  };
}
