import type { TaskBrowseStore, TaskRecord } from '../engine/index.js';

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
}

export interface Owners {
  owners: OwnerLoad[];
  /** The kinds whose read stopped at `OWNERS_READ` tasks: their counts are lower bounds. */
  capped: Array<'working' | 'inputRequired' | 'lastHour'>;
  read: number;
}

/**
 * Each owner's load: running and waiting tasks (from the status index) and tasks created in the last hour (from the
 * creation index), each read up to `OWNERS_READ` tasks, so the view costs the same with any number stored.
 */
export async function readOwners(browse: TaskBrowseStore, now: number): Promise<Owners> {
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
      if (!load) loads.set(record.owner, (load = { owner: record.owner, working: 0, inputRequired: 0, lastHour: 0 }));
      load[field] += 1;
    }
  };
  count(working, 'working');
  count(waiting, 'inputRequired');
  count(recent, 'lastHour');
  const owners = [...loads.values()]
    .sort((a, b) => b.working + b.inputRequired - (a.working + a.inputRequired) || b.lastHour - a.lastHour)
    .slice(0, MAX_OWNERS);
  const capped = (
    [
      ['working', working],
      ['inputRequired', waiting],
      ['lastHour', recent],
    ] as const
  )
    .filter(([, records]) => records.length >= OWNERS_READ)
    .map(([kind]) => kind);
  return { owners, capped, read: working.length + waiting.length + recent.length };
}
