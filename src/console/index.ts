export type { TaskRecord, TimelineEntry } from '../engine/index.js';
export { describeEntry } from './describeEntry.js';
export { timelineLines } from './timelineLines.js';
export { readTaskHistory, type TaskHistory } from './readTaskHistory.js';
