import type { Clock } from '../contracts/Clock.js';
import type { StepJournalStore, WakeEntry } from '../contracts/StepJournalStore.js';

/**
 * Turns the store's durable timers into runs: every `intervalMs` it reads the timers due within the next interval
 * and sets an in-process timer for each, so a task wakes on time on whichever instance sees it first (the engine's
 * compare-and-set lets exactly one of them resume it). Nothing is held for timers further away than one interval.
 */
export class WakeScheduler {
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private loop: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly journal: StepJournalStore,
    private readonly wake: (entry: WakeEntry) => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    void this.poll();
    this.loop = setInterval(() => void this.poll(), this.intervalMs);
    this.loop.unref();
  }

  stop(): void {
    clearInterval(this.loop);
    this.loop = undefined;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Arms an in-process timer for a wake-up this process just set, when it falls within one interval. */
  schedule(entry: WakeEntry): void {
    if (!this.loop) return;
    const delay = entry.wakeAt - this.clock.now();
    if (delay > this.intervalMs) return;
    const existing = this.timers.get(entry.taskId);
    if (existing?.at === entry.wakeAt) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(
      () => {
        this.timers.delete(entry.taskId);
        this.wake(entry).catch(this.onError);
      },
      // A timer may fire a millisecond early; the wake-up must find the task due.
      Math.max(0, delay) + 2,
    );
    timer.unref();
    this.timers.set(entry.taskId, { at: entry.wakeAt, timer });
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const due = await this.journal.due(this.clock.now() + this.intervalMs, 1000);
      for (const entry of due) this.schedule(entry);
    } catch (error) {
      this.onError(error);
    } finally {
      this.polling = false;
    }
  }
}
