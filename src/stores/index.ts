export * from './memory/index.js';
export * from './sqlite/index.js';
