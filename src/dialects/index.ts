export * from './core-2025-11-25/index.js';
export * from './shared/index.js';
