export { SqliteStore, type SqliteStoreOptions } from './SqliteStore.js';
export * from './SqliteStepJournalStore.js';
