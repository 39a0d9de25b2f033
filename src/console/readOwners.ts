import type { TaskBrowseStore, TaskLimitError, TaskRecord } from '../engine/index.js';
import type { QueueDepthSample } from './QueueDepthHistory.js';

type Refused = Partial<Record<TaskLimitError['limit'], number>>;

/** Tasks read per kind (running, waiting, created in the last hour) for the owners view. */
export const OWNERS_READ = 2000;
/** Owners the view lists at most, the busiest first. */
const MAX_OWNERS = 100;
const HOUR_MS = 3600_000;

export interface OwnerLoad {
  owner: string;
  working: number;
  inputRequired: number;
  /** Tasks created in the last hour. */
  lastHour: number;
  /** Bytes of the owner's stored tasks, as its byte cap counts them; absent where the store does not count them. */
  storedBytes?: number;
  /** Refusals at a limit in this process since it started, by limit. */
  refused: Refused;
}

/** What the owners view reads besides the browse index. */
export interface OwnersSources {
  /** The store's per-owner byte count (TaskStore.storedBytesOf). */
  storedBytesOf?: (owner: string) => Promise<number>;
  /** Owners refused at a limit, most recently first (TaskEngine.refusedOwners). */
  refusedOwners?: () => Array<{ owner: string; refused: Refused }>;
  /** The queue's depth over the last hour; undefined where no executor is read. */
  queueDepth?: () => QueueDepthSample[];
}

export interface Owners {
  owners: OwnerLoad[];
  /** The kinds whose read stopped at `OWNERS_READ` tasks: their counts are lower bounds. */
  capped: Array<'working' | 'inputRequired' | 'lastHour'>;
  read: number;
  /** When it was read (epoch ms): the queue chart's right end. */
  now: number;
  /** Readings of the queue's depth over the last hour, oldest first; absent where the console reads no executor. */
  queue?: QueueDepthSample[];
}

/**
 * Each owner's load: running and waiting tasks (from the status index) and tasks created in the last hour (from the
 * creation index), each read up to `OWNERS_READ` tasks, so the view costs the same with any number stored; then the
 * stored bytes of each owner listed (one counter read each) and its refusals, and the queue's depth over the hour.
 */
export async function readOwners(browse: TaskBrowseStore, now: number, sources: OwnersSources = {}): Promise<Owners> {
  const page = (filter: Parameters<TaskBrowseStore['page']>[0]) => browse.page(filter, { limit: OWNERS_READ, now });
  const [working, waiting, recent] = await Promise.all([
    page({ status: 'working' }),
    page({ status: 'input_required' }),
    page({ createdFrom: now - HOUR_MS }),
  ]);
  const loads = new Map<string, OwnerLoad>();
  const count = (records: TaskRecord[], field: 'working' | 'inputRequired' | 'lastHour') => {
    for (const record of records) {
      let load = loads.get(record.owner);
      if (!load) loads.set(record.owner, (load = newLoad(record.owner)));
      load[field] += 1;
    }
  };
  const refusedOwners = sources.refusedOwners?.() ?? [];
  count(working, 'working');
  count(waiting, 'inputRequired');
  count(recent, 'lastHour');
  // An owner refused lately is listed even without a running or recent task (refused for its stored bytes, say).
  for (const { owner, refused } of refusedOwners) {
    let load = loads.get(owner);
    if (!load) loads.set(owner, (load = newLoad(owner)));
    load.refused = refused;
  }
  const owners = [...loads.values()]
    .sort(
      (a, b) =>
        b.working + b.inputRequired - (a.working + a.inputRequired) ||
        b.lastHour - a.lastHour ||
        refusals(b) - refusals(a),
    )
    .slice(0, MAX_OWNERS);
  const bytesOf = sources.storedBytesOf;
  if (bytesOf)
    await Promise.all(
      owners.map(async (load) => {
        const bytes = await bytesOf(load.owner).catch(() => undefined);
        if (bytes !== undefined) load.storedBytes = bytes;
      }),
    );
  const capped = (
    [
      ['working', working],
      ['inputRequired', waiting],
      ['lastHour', recent],
    ] as const
  )
    .filter(([, records]) => records.length >= OWNERS_READ)
    .map(([kind]) => kind);
  const queue = sources.queueDepth?.();
  const read = working.length + waiting.length + recent.length;
  return { owners, capped, read, now, ...(queue && { queue }) };
}

function newLoad(owner: string): OwnerLoad {
  return { owner, working: 0, inputRequired: 0, lastHour: 0, refused: {} };
}

function refusals(load: OwnerLoad): number {
  return Object.values(load.refused).reduce((sum, n) => sum + n, 0);
}
