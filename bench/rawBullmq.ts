// The raw BullMQ row of `npm run bench:distributed`: one producer keeps IN_FLIGHT empty jobs in flight and learns of
// each completion through QueueEvents, with the same worker processes, concurrency and Redis as the task rows. What
// the queue itself moves on this machine, so each task row can be read as a ratio of it.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';

import { cpuOf } from './processCpu.js';
import { deleteKeys, spawnReady, stopWorker } from './queueBench.js';

const WORKER_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'rawBullmqWorker.js');

export interface RawFigures {
  jobsPerSecond: number;
  /** Redis commands a job (INFO commandstats over the measurement, every client). */
  redisCommands: number;
  /** CPU a job, ms, by process group. */
  cpu: Record<string, number>;
}

/** Every command Redis has served since its start (the sum of INFO commandstats calls). */
export async function redisCommandsServed(url: string): Promise<number> {
  const client = new Redis(url);
  try {
    const stats = await client.info('commandstats');
    let total = 0;
    for (const match of stats.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) total += Number(match[1]);
    // This INFO itself is one of them; the caller subtracts two readings, so it cancels out.
    return total;
  } finally {
    client.disconnect();
  }
}

function startRawWorker(redisUrl: string, queueName: string, concurrency: number): Promise<ChildProcess> {
  return spawnReady(WORKER_SCRIPT, {
    BENCH_REDIS_URL: redisUrl,
    BENCH_QUEUE: queueName,
    BENCH_CONCURRENCY: String(concurrency),
  });
}

export async function rawBullmq(options: {
  redisUrl: string;
  workers: number;
  concurrency: number;
  inFlight: number;
  warmupMs: number;
  measureMs: number;
  redisPid: number;
}): Promise<RawFigures> {
  const queueName = `mcp-tasks-bench-raw-${randomUUID().slice(0, 8)}`;
  const url = new URL(options.redisUrl);
  const connection = { host: url.hostname, port: Number(url.port || 6379), db: Number(url.pathname.slice(1) || 0) };
  const queue = new Queue(queueName, { connection });
  const events = new QueueEvents(queueName, { connection });
  // Every job in flight waits on both with listeners of its own.
  queue.setMaxListeners(options.inFlight * 2 + 10);
  events.setMaxListeners(options.inFlight * 2 + 10);
  await events.waitUntilReady();
  const workers: ChildProcess[] = [];
  try {
    for (let i = 0; i < options.workers; i++)
      workers.push(await startRawWorker(options.redisUrl, queueName, options.concurrency));
    const run = async (ms: number): Promise<{ count: number; seconds: number }> => {
      let count = 0;
      let stop = false;
      const start = performance.now();
      const timer = setTimeout(() => (stop = true), ms);
      await Promise.all(
        Array.from({ length: options.inFlight }, async () => {
          while (!stop) {
            // Completed jobs are kept (the last 1,000): a job removed on completion can vanish before its waiter
            // checks it, which BullMQ reports as a failure.
            const job = await queue.add('job', {}, { removeOnComplete: 1000, removeOnFail: 1000 });
            await job.waitUntilFinished(events);
            count++;
          }
        }),
      );
      clearTimeout(timer);
      return { count, seconds: (performance.now() - start) / 1000 };
    };
    await run(options.warmupMs);
    const meters = Object.entries({
      requestor: () => [process.pid],
      workers: () => workers.map((worker) => worker.pid as number),
      redis: () => [options.redisPid],
    }).map(([group, pids]) => [group, cpuOf(pids)] as const);
    const before = await redisCommandsServed(options.redisUrl);
    const { count, seconds } = await run(options.measureMs);
    const commands = (await redisCommandsServed(options.redisUrl)) - before;
    return {
      jobsPerSecond: count / seconds,
      redisCommands: commands / count,
      cpu: Object.fromEntries(meters.map(([group, meter]) => [group, meter.stop() / count])),
    };
  } finally {
    await Promise.all(workers.map(stopWorker));
    await events.close();
    await queue.close();
    await deleteKeys(options.redisUrl, `bull:${queueName}:*`);
  }
}
