import { join } from 'node:path';

import { TaskEngine, type Clock, type TaskEngineOptions, type TaskStore } from '../../src/engine/index.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { tempDir } from './tmp.js';

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(public time = 1_750_000_000_000) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

export const STORE_FACTORIES: Array<[string, () => TaskStore]> = [
  ['memory', () => new MemoryStore()],
  ['sqlite', () => new SqliteStore({ path: join(tempDir(), 'tasks.db') })],
];

export async function startEngine(store: TaskStore, options: Partial<TaskEngineOptions> = {}): Promise<TaskEngine> {
  const engine = new TaskEngine({ store, sweepIntervalMs: 0, recoveryIntervalMs: 0, ...options });
  await engine.start();
  return engine;
}
