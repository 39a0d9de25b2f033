// The public API: add tasks to an MCP server (`createMcpTasks`), pick a store, and the engine underneath.
export * from './engine/index.js';
export * from './server/index.js';
export * from './stores/index.js';
export * from './workflow/index.js';
