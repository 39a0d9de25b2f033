import type { TaskRecord } from '../record/TaskRecord.js';
import type { TaskStore, TimelineAppend } from '../contracts/TaskStore.js';
import { timelineEntries, type TimelineEntry } from '../record/TaskTimeline.js';

/**
 * The engine's one hook into the timeline: every stored write hands its (previous, next) pair here, right after the
 * compare-and-set won. A failed append is logged and never fails the transition, which is stored already.
 */
export class TimelineRecorder {
  constructor(
    private readonly store: TaskStore,
    private readonly maxEntries: number,
    private readonly logger: { warn(fields: Record<string, unknown>, message: string): void },
  ) {}

  async init(): Promise<void> {
    await this.store.timeline?.init();
    await this.store.browse?.init();
  }

  /**
   * What the write from `previous` to `next` adds to the task's timeline, then `extra` (entries the writer adds to
   * it); undefined when nothing (or none kept).
   */
  entriesFor(
    previous: TaskRecord | undefined,
    next: TaskRecord,
    extra: TimelineEntry[] = [],
  ): TimelineAppend | undefined {
    if (!this.store.timeline || this.maxEntries <= 0) return undefined;
    const entries = [...timelineEntries(previous, next), ...extra];
    return entries.length === 0 ? undefined : { entries, maxEntries: this.maxEntries };
  }

  async record(previous: TaskRecord | undefined, next: TaskRecord, extra?: TimelineEntry[]): Promise<void> {
    const timeline = this.store.timeline;
    const append = this.entriesFor(previous, next, extra);
    if (!timeline || !append) return;
    try {
      await timeline.append(next.taskId, append.entries, append.maxEntries);
    } catch (error) {
      this.logger.warn({ taskId: next.taskId, error: String(error) }, 'task timeline append failed');
    }
  }

  /** Entries no write derives (see TaskEngine.recordTimeline); a failed append is logged. */
  async append(taskId: string, entries: TimelineEntry[]): Promise<void> {
    const timeline = this.store.timeline;
    if (!timeline || this.maxEntries <= 0 || entries.length === 0) return;
    try {
      await timeline.append(taskId, entries, this.maxEntries);
    } catch (error) {
      this.logger.warn({ taskId, error: String(error) }, 'task timeline append failed');
    }
  }

  async remove(taskId: string): Promise<void> {
    await this.store.timeline?.remove(taskId);
  }

  async read(taskId: string): Promise<TimelineEntry[]> {
    return (await this.store.timeline?.read(taskId)) ?? [];
  }
}
