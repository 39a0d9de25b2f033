import type { QueueStats } from '../../console/index.js';
import type { Executor } from '../../engine/index.js';
import { QueueExecutor } from '../../executors/index.js';

/** The console's queue figures when tasks run on the queue executor: BullMQ's job counts and its live workers. */
export function queueStatsOf(executor: Executor): (() => Promise<QueueStats>) | undefined {
  if (!(executor instanceof QueueExecutor)) return undefined;
  const queue = executor.queue;
  return async () => {
    const [counts, workers] = await Promise.all([
      queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed'),
      queue.getWorkers(),
    ]);
    return {
      waiting: (counts['waiting'] ?? 0) + (counts['prioritized'] ?? 0),
      active: counts['active'] ?? 0,
      delayed: counts['delayed'] ?? 0,
      workers: workers.map((worker) => ({
        name: String(worker['name'] ?? worker['id'] ?? 'worker'),
        ...(worker['addr'] !== undefined && { addr: String(worker['addr']) }),
        ...(worker['age'] !== undefined && { age: Number(worker['age']) }),
      })),
    };
  };
}
