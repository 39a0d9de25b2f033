export * from './in-process/index.js';
