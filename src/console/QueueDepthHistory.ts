import type { ExecutorLoad, QueueStats } from '../engine/index.js';

/** One reading of the queue: tasks waiting for a slot or a worker, and tasks running. */
export interface QueueDepthSample {
  at: number;
  waiting: number;
  running: number;
}

export interface QueueDepthSource {
  /** A queue executor's state: waiting and delayed jobs wait, active ones run. */
  queueStats?: () => Promise<QueueStats>;
  /** An in-process executor's load. */
  load?: () => ExecutorLoad;
}

/** How often the queue is read. */
export const QUEUE_SAMPLE_MS = 30_000;
/** Readings kept: an hour of them. */
export const QUEUE_SAMPLES = 120;

/**
 * The queue's depth over the last hour, read in this process every QUEUE_SAMPLE_MS into a ring of QUEUE_SAMPLES (the
 * memory never grows); a console with no executor to read has none. The timer does not keep the process alive.
 */
export class QueueDepthHistory {
  private readonly ring: QueueDepthSample[] = [];
  private next = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: QueueDepthSource,
    private readonly now: () => number,
    private readonly size = QUEUE_SAMPLES,
  ) {}

  get available(): boolean {
    return this.source.queueStats !== undefined || this.source.load !== undefined;
  }

  start(intervalMs = QUEUE_SAMPLE_MS): void {
    if (!this.available || this.timer) return;
    void this.sample();
    this.timer = setInterval(() => void this.sample(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads the queue once; a failed read leaves no sample. */
  async sample(): Promise<void> {
    const at = this.now();
    let reading: QueueDepthSample | undefined;
    if (this.source.queueStats) {
      const stats = await this.source.queueStats().catch(() => undefined);
      if (stats) reading = { at, waiting: stats.waiting + stats.delayed, running: stats.active };
    } else if (this.source.load) {
      const load = this.source.load();
      reading = { at, waiting: load.waiting, running: load.running };
    }
    if (!reading) return;
    if (this.ring.length < this.size) this.ring.push(reading);
    else this.ring[this.next] = reading;
    this.next = (this.next + 1) % this.size;
  }

  /** The readings of the last hour, oldest first. */
  lastHour(): QueueDepthSample[] {
    const since = this.now() - 3600_000;
    const ordered =
      this.ring.length < this.size ? this.ring : [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    return ordered.filter((sample) => sample.at >= since);
  }
}
