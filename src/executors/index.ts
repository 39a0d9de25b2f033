export * from './in-process/index.js';
export * from './queue/index.js';
