// `mcp-tasks/stores/memory`: tasks in this process's memory (tests, demos); lost on exit.
export { MemoryStore } from '../../stores/memory/index.js';
