export * from './memory/index.js';
export * from './postgres/index.js';
export * from './redis/index.js';
export * from './sqlite/index.js';
