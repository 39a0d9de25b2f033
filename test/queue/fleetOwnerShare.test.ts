// An owner's share of the running slots holds across the whole fleet of queue workers (two real worker processes on
// one Redis store and queue), another owner still finds slots, and the share held by a worker killed with SIGKILL comes
// back once its leases lapse instead of leaking.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { isTerminal, TaskEngine, type TaskRecord } from '../../src/engine/index.js';
import { QueueExecutor } from '../../src/executors/index.js';
import { RedisStore } from '../../src/stores/redis/index.js';
import { isolatedQueue, redisBackend, type StoreBackend } from '../distributed/backends.js';
import { redisUrl, sleep } from '../distributed/suites.js';
import { callOf as call } from '../helpers/gatedWork.js';
import { eventually, ROOT } from '../helpers/rawWire.js';

const WORKER = join(ROOT, 'test/fixtures/shareWorker.mjs');
/** Per worker: 8 slots, and an owner share of 3 that, counted per worker, would let one owner run 6 tasks. */
const CONCURRENCY = 8;
const SHARE = 3;
const LEASE_MS = 1500;

interface WorkerProcess {
  child: ChildProcess;
  runnerId: string;
  exited: Promise<unknown>;
}

async function startWorker(storeUrl: string, queueUrl: string, queue: string): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    [WORKER, storeUrl, queueUrl, queue, String(CONCURRENCY), String(SHARE), String(LEASE_MS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const runnerId = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /ready (\S+)\n/.exec(out);
      if (ready) resolve(ready[1] as string);
    });
    void exited.then(() => reject(new Error(`worker exited before it was ready: ${out}`)));
  });
  return { child, runnerId, exited };
}

if (redisUrl) {
  const url = redisUrl;
  describe('the owner share across two worker processes', () => {
    let backend: StoreBackend;
    let queue: ReturnType<typeof isolatedQueue>;
    let engine: TaskEngine;
    let producer: QueueExecutor;
    const workers: WorkerProcess[] = [];

    beforeAll(async () => {
      backend = await redisBackend(url, 13);
      queue = isolatedQueue(url);
      engine = new TaskEngine({
        store: new RedisStore({ url: backend.spec }),
        leaseMs: LEASE_MS,
        sweepIntervalMs: 0,
        recoveryIntervalMs: 0,
      });
      producer = new QueueExecutor({ engine, store: engine.store, connection: url, queueName: queue.name });
      engine.setExecutor(producer);
      await engine.start();
      for (let i = 0; i < 2; i++) workers.push(await startWorker(backend.spec, url, queue.name));
    }, 60_000);
    afterAll(async () => {
      for (const worker of workers) {
        worker.child.kill('SIGKILL');
        await worker.exited;
      }
      await producer?.close();
      await engine?.close();
      await queue?.dispose();
      await backend?.dispose();
    });

    const create = async (owner: string, tool: string): Promise<string> =>
      (await engine.create({ owner, request: call(tool), dialect: 't' })).task.taskId;
    const records = async (ids: string[]): Promise<TaskRecord[]> =>
      (await Promise.all(ids.map((id) => engine.store.get(id)))).filter((r): r is TaskRecord => r !== undefined);
    /** The tasks among `ids` running now on `runners`, by runner. */
    const runningOn = async (ids: string[], runners: string[]): Promise<Map<string, number>> => {
      const counts = new Map<string, number>();
      for (const record of await records(ids)) {
        if (isTerminal(record.status) || record.runner === undefined || !runners.includes(record.runner)) continue;
        counts.set(record.runner, (counts.get(record.runner) ?? 0) + 1);
      }
      return counts;
    };
    const total = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0);

    it(
      "holds one owner to its share of the fleet, runs another owner's tasks beside it, and frees a killed worker's share",
      { timeout: 90_000 },
      async () => {
        const runners = workers.map((worker) => worker.runnerId);
        const alice: string[] = [];
        for (let i = 0; i < 10; i++) alice.push(await create('alice', 'long'));
        await eventually(async () => total(await runningOn(alice, runners)) === SHARE, 20_000);
        // Both workers keep taking alice's jobs (and deferring them) for a while: the share still holds fleet-wide.
        await sleep(1500);
        expect(total(await runningOn(alice, runners))).toBe(SHARE);

        // Another owner is not crowded out: its quick task completes and its long ones start beside alice's.
        const quick = await create('bob', 'quick');
        expect((await engine.waitForTerminal(quick))?.status).toBe('completed');
        const bob: string[] = [];
        for (let i = 0; i < SHARE; i++) bob.push(await create('bob', 'long'));
        await eventually(async () => total(await runningOn(bob, runners)) === SHARE, 20_000);
        expect(total(await runningOn(alice, runners))).toBe(SHARE);

        // Kill the worker holding most of alice's runs: its entries lapse with their lease, so the survivor takes up
        // alice's whole share again (a counter leaked by the dead worker would keep her below it for ever).
        const held = await runningOn(alice, runners);
        const victim = workers.reduce((a, b) => ((held.get(a.runnerId) ?? 0) >= (held.get(b.runnerId) ?? 0) ? a : b));
        const survivor = workers.find((worker) => worker !== victim) as WorkerProcess;
        expect(held.get(victim.runnerId) ?? 0).toBeGreaterThan(0);
        victim.child.kill('SIGKILL');
        await victim.exited;
        await eventually(async () => total(await runningOn(alice, [survivor.runnerId])) === SHARE, 30_000);
        await sleep(1000);
        expect(total(await runningOn(alice, [survivor.runnerId]))).toBe(SHARE);
        expect(total(await runningOn(bob, [survivor.runnerId]))).toBeLessThanOrEqual(SHARE);
      },
    );
  });
}
