export { SqliteStore, type SqliteStoreOptions } from './SqliteStore.js';
