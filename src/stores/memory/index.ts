export { MemoryStore } from './MemoryStore.js';
export * from './MemoryJournal.js';
