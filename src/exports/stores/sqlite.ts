// `mcp-tasks/stores/sqlite`: the embedded default, one SQLite file (better-sqlite3, WAL).
export { SqliteStore, type SqliteStoreOptions } from '../../stores/sqlite/index.js';
