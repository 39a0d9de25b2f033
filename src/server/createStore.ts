import type { TaskStore } from '../engine/index.js';
import { MemoryStore, PostgresStore, RedisStore, SqliteStore } from '../stores/index.js';

/** The embedded default: a SQLite file in the working directory. */
export const DEFAULT_STORE = './mcp-tasks.db';

/**
 * A store from a short spec: `memory`, a SQLite file path (the default), `postgres://…` or `redis://…`.
 */
export async function createStore(spec: string = DEFAULT_STORE): Promise<TaskStore> {
  if (spec === 'memory') return new MemoryStore();
  if (/^postgres(ql)?:\/\//.test(spec)) return new PostgresStore({ connectionString: spec });
  if (/^rediss?:\/\//.test(spec)) return new RedisStore({ url: spec });
  return new SqliteStore({ path: spec.replace(/^sqlite:/, '') });
}
