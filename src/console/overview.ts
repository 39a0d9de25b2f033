import type { QueueStats, TaskBrowseStore, TaskStatus } from '../engine/index.js';

export type { QueueStats } from '../engine/index.js';

export interface Overview {
  counts: Partial<Record<TaskStatus, number>>;
  /** Per minute of the last hour, oldest first: tasks created and finished in it. */
  minutes: Array<{ at: number; created: number; finished: number }>;
  /** Durations (creation to terminal status) of the tasks that finished in the last hour. */
  p50Ms: number | null;
  p99Ms: number | null;
  /** Tasks read for the chart: the newest created in the last hour, at most `OVERVIEW_SAMPLE`. */
  sampled: number;
  queue?: QueueStats;
}

/** The chart reads at most this many of the tasks created in the last hour (the newest). */
export const OVERVIEW_SAMPLE = 5000;
const MINUTE = 60_000;

/** Counts and the last hour's chart, from the status counts and one creation-range read of the browse index. */
export async function readOverview(
  browse: TaskBrowseStore,
  now: number,
  queue?: () => Promise<QueueStats>,
): Promise<Overview> {
  const start = Math.floor((now - 59 * MINUTE) / MINUTE) * MINUTE;
  const [counts, recent, queueStats] = await Promise.all([
    browse.counts(),
    browse.page({ createdFrom: start }, { limit: OVERVIEW_SAMPLE, now }),
    queue?.().catch(() => undefined),
  ]);
  const minutes = Array.from({ length: 60 }, (_, i) => ({ at: start + i * MINUTE, created: 0, finished: 0 }));
  const durations: number[] = [];
  for (const record of recent) {
    const created = minutes[Math.floor((record.createdAt - start) / MINUTE)];
    if (created) created.created++;
    if (record.terminalAt !== undefined) {
      const finished = minutes[Math.floor((record.terminalAt - start) / MINUTE)];
      if (finished) finished.finished++;
      durations.push(record.terminalAt - record.createdAt);
    }
  }
  durations.sort((a, b) => a - b);
  const overview: Overview = {
    counts,
    minutes,
    p50Ms: percentile(durations, 0.5),
    p99Ms: percentile(durations, 0.99),
    sampled: recent.length,
  };
  if (queueStats) overview.queue = queueStats;
  return overview;
}

function percentile(sorted: number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}
