export { MemoryStore } from './MemoryStore.js';
