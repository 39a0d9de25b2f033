export * from './core-2025-11-25/index.js';
export * from './ext-tasks/index.js';
export * from './sep-1686/index.js';
export * from './shared/index.js';
