import type { TaskTimelineStore, TimelineEntry } from '../../engine/index.js';

/** Timelines in process memory, kept as JSON text so what is read back is always a fresh copy. */
export class MemoryTimeline implements TaskTimelineStore {
  private readonly entries = new Map<string, string[]>();

  async init(): Promise<void> {}

  async append(taskId: string, entries: TimelineEntry[], maxEntries: number): Promise<void> {
    let kept = this.entries.get(taskId);
    if (!kept) this.entries.set(taskId, (kept = []));
    for (const entry of entries) kept.push(JSON.stringify(entry));
    // The first entry stays; the oldest after it go.
    if (kept.length > maxEntries) kept.splice(1, kept.length - Math.max(1, maxEntries));
  }

  async read(taskId: string): Promise<TimelineEntry[]> {
    return (this.entries.get(taskId) ?? []).map((text) => JSON.parse(text) as TimelineEntry);
  }

  async remove(taskId: string): Promise<void> {
    this.entries.delete(taskId);
  }
}
