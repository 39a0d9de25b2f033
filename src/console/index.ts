export type { TaskRecord, TimelineEntry } from '../engine/index.js';
export { describeEntry } from './describeEntry.js';
export { timelineLines } from './timelineLines.js';
export { readTaskHistory, type TaskHistory } from './readTaskHistory.js';
export { TaskConsole, type ConsoleOptions } from './TaskConsole.js';
export type { QueueStats, Overview } from './overview.js';
export type { ConsoleAuditRecord } from './ConsoleActions.js';
export { serveConsole, type ConsoleServerHandle } from './serveConsole.js';
