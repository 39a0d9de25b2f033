// A worker process of `npm run bench:distributed`: runWorker with the fixture tools on the store the benchmark
// names, isolated by schema (PostgreSQL) or key prefix (Redis). Prints "ready" on stdout once it takes jobs.
import type { TaskStore } from '../src/engine/index.js';
import { runWorker } from '../src/server/worker/index.js';
import { PostgresStore, RedisStore } from '../src/stores/index.js';
import { createFixtureServer } from '../examples/conformance/fixtureTools.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

function openStore(): TaskStore {
  const url = env('BENCH_STORE_URL');
  if (env('BENCH_STORE') === 'postgres')
    return new PostgresStore({ connectionString: url, schema: env('BENCH_SCOPE') });
  return new RedisStore({ url, keyPrefix: env('BENCH_SCOPE') });
}

const worker = await runWorker({
  server: createFixtureServer,
  store: openStore(),
  redisUrl: env('BENCH_REDIS_URL'),
  queueName: env('BENCH_QUEUE'),
  concurrency: Number(env('BENCH_CONCURRENCY')),
  engine: { sweepIntervalMs: 0 },
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void worker.close({ timeoutMs: 1000 }).finally(() => process.exit(0));
});
