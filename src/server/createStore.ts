import type { TaskStore } from '../engine/index.js';

/** The embedded default: a SQLite file in the working directory. */
export const DEFAULT_STORE = './mcp-tasks.db';

/**
 * A store from a short spec: `memory`, a SQLite file path (the default), `postgres://…` or `redis://…`.
 * Each backend is imported only when its spec is chosen, so a memory store never loads a database driver.
 */
export async function createStore(spec: string = DEFAULT_STORE): Promise<TaskStore> {
  if (spec === 'memory') return new (await import('../stores/memory/index.js')).MemoryStore();
  if (/^postgres(ql)?:\/\//.test(spec))
    return new (await import('../stores/postgres/index.js')).PostgresStore({ connectionString: spec });
  if (/^rediss?:\/\//.test(spec)) return new (await import('../stores/redis/index.js')).RedisStore({ url: spec });
  return new (await import('../stores/sqlite/index.js')).SqliteStore({ path: spec.replace(/^sqlite:/, '') });
}
