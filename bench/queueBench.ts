// What the queue benchmarks share: bench worker processes (distributedWorker.ts) and stores isolated by schema
// (PostgreSQL) or key prefix (Redis), removed afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';

import { Redis } from 'ioredis';
import pg from 'pg';

import type { TaskStore } from '../src/engine/index.js';
import { PostgresStore, RedisStore } from '../src/stores/index.js';

const WORKER_SCRIPT = fileURLToPath(new URL('./distributedWorker.js', import.meta.url));

export interface Backend {
  kind: 'postgres' | 'redis';
  url: string;
  scope: string;
  open(): TaskStore;
  dispose(): Promise<void>;
}

export async function postgresBackend(url: string): Promise<Backend> {
  const scope = `mcp_tasks_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${scope}`);
  await admin.end();
  return {
    kind: 'postgres',
    url,
    scope,
    open: () => new PostgresStore({ connectionString: url, schema: scope }),
    async dispose() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${scope} CASCADE`);
      await client.end();
    },
  };
}

export async function redisBackend(url: string): Promise<Backend> {
  const scope = `mcp-tasks-bench:${randomUUID().slice(0, 8)}:`;
  return {
    kind: 'redis',
    url,
    scope,
    open: () => new RedisStore({ url, keyPrefix: scope }),
    dispose: () => deleteKeys(url, `${scope}*`),
  };
}

export async function deleteKeys(url: string, pattern: string): Promise<void> {
  const client = new Redis(url);
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
  await client.quit();
}

/** A bench worker process on `backend`'s store and the queue `queueName`; resolves once it takes jobs. */
export function startWorker(backend: Backend, redisUrl: string, queueName: string, concurrency: number) {
  return spawnReady(WORKER_SCRIPT, {
    BENCH_STORE: backend.kind,
    BENCH_STORE_URL: backend.url,
    BENCH_SCOPE: backend.scope,
    BENCH_REDIS_URL: redisUrl,
    BENCH_QUEUE: queueName,
    BENCH_CONCURRENCY: String(concurrency),
  });
}

/** Runs `script` with `env` added; resolves once it prints "ready" on stdout. */
export function spawnReady(script: string, env: Record<string, string>): Promise<ChildProcess> {
  // BENCH_NODE_ARGS: node options for the bench's child processes, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const nodeArgs = process.env['BENCH_NODE_ARGS']?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise<ChildProcess>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`bench worker ${script} exited (${code})`)));
  });
}

export async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
