export { PgEventBus, type PgEventBusOptions } from './PgEventBus.js';
export { PostgresStore, type PostgresStoreOptions } from './PostgresStore.js';
export { PgStepJournalStore } from './PgStepJournalStore.js';
