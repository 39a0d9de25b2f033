export * from './core20251125/index.js';
export * from './ext2026/index.js';
export * from './sep1686/index.js';
export * from './shared/index.js';
