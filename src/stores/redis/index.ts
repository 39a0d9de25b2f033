export { RedisEventBus, type RedisEventBusOptions } from './RedisEventBus.js';
export { RedisStore, type RedisStoreOptions } from './RedisStore.js';
export { RedisStepJournalStore } from './RedisStepJournalStore.js';
