// A worker process of `npm run bench:distributed`'s raw BullMQ row: a plain BullMQ Worker whose jobs do nothing, the
// queue's own cost with no task runtime around it. Prints "ready" on stdout once it takes jobs.
import { Worker } from 'bullmq';

const url = new URL(process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379');
const worker = new Worker(process.env['BENCH_QUEUE'] ?? 'raw', async () => 'done', {
  connection: { host: url.hostname, port: Number(url.port || 6379), db: Number(url.pathname.slice(1) || 0) },
  concurrency: Number(process.env['BENCH_CONCURRENCY'] ?? 32),
});
await worker.waitUntilReady();
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void worker.close().finally(() => process.exit(0));
});
