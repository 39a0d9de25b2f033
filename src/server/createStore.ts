import type { TaskStore } from '../engine/index.js';
import { MemoryStore, SqliteStore } from '../stores/index.js';

/** The embedded default: a SQLite file in the working directory. */
export const DEFAULT_STORE = './mcp-tasks.db';

/**
 * A store from a short spec: `memory`, a SQLite file path (the default), `postgres://…` or `redis://…`.
 */
export async function createStore(spec: string = DEFAULT_STORE): Promise<TaskStore> {
  if (spec === 'memory') return new MemoryStore();
  if (/^(postgres(ql)?|rediss?):\/\//.test(spec)) throw new Error(`Store not available yet: ${spec}`);
  return new SqliteStore({ path: spec.replace(/^sqlite:/, '') });
}
