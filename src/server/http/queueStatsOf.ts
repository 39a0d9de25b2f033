import type { QueueStats } from '../../console/index.js';
import type { Executor } from '../../engine/index.js';

/** What the queue executor's BullMQ queue offers the console (read structurally: bullmq loads only with a queue). */
interface QueueLike {
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
  getWorkers(): Promise<Array<Record<string, string>>>;
}

/** The console's queue figures when tasks run on the queue executor: BullMQ's job counts and its live workers. */
export function queueStatsOf(executor: Executor): (() => Promise<QueueStats>) | undefined {
  const queue = (executor as { queue?: Partial<QueueLike> }).queue;
  if (typeof queue?.getJobCounts !== 'function' || typeof queue.getWorkers !== 'function') return undefined;
  const bullmq = queue as QueueLike;
  return async () => {
    const [counts, workers] = await Promise.all([
      bullmq.getJobCounts('waiting', 'prioritized', 'active', 'delayed'),
      bullmq.getWorkers(),
    ]);
    return {
      waiting: (counts['waiting'] ?? 0) + (counts['prioritized'] ?? 0),
      active: counts['active'] ?? 0,
      delayed: counts['delayed'] ?? 0,
      workers: workers.map((worker) => ({
        name: worker['name'] ?? worker['id'] ?? 'worker',
        ...(worker['addr'] !== undefined && { addr: worker['addr'] }),
        ...(worker['age'] !== undefined && { age: Number(worker['age']) }),
      })),
    };
  };
}
