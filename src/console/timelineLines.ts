import type { TimelineEntry } from '../engine/index.js';
import { describeEntry } from './describeEntry.js';

/** The timeline as text lines: time, offset from creation, what happened. */
export function timelineLines(entries: TimelineEntry[]): string[] {
  const start = entries[0]?.at ?? 0;
  return entries.map((entry) => {
    const offset = `+${((entry.at - start) / 1000).toFixed(3)}s`;
    return `${new Date(entry.at).toISOString()}  ${offset.padStart(10)}  ${describeEntry(entry)}`;
  });
}
