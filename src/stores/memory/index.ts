export { MemoryStore } from './MemoryStore.js';
export * from './MemoryStepJournalStore.js';
