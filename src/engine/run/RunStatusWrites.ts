import type { EngineHandle } from '../contracts/Executor.js';
import type { ProgressUpdate, ReportedStatus, TaskRecord } from '../record/TaskRecord.js';

/**
 * How long a run's first reports wait before they are written: a run that ends within it writes its last report with
 * its outcome only (TaskRunner passes `reported` to `complete`), one write fewer per short task. A status read still
 * shows a longer run's progress this long after its start at most.
 */
export const FIRST_REPORT_HOLD_MS = 250;

/** What of a run its status writes read and update. */
export interface ReportingRun {
  readonly taskId: string;
  readonly attempt: number;
  /** The newest copy of the task the run has: each write is tried on it, and it becomes the write's result. */
  latest: TaskRecord;
  /** The run's last report of itself (the runner keeps it for the outcome's write). */
  reported?: ReportedStatus;
}

type Writes = Pick<EngineHandle, 'reportProgress' | 'setStatusMessage'>;

/**
 * A run's reports of itself (progress, status message) on their way to the store. They are written one at a time on
 * the run's latest copy of the task, so none reads the task first, and the outcome's write waits for them (`settle`):
 * a report never makes the outcome's compare-and-set fail, nor the outcome a report's. The first ones are held for
 * FIRST_REPORT_HOLD_MS (see there).
 */
export class RunStatusWrites {
  private chain: Promise<unknown> = Promise.resolve();
  private held: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly holdUntil: number;

  constructor(
    private readonly engine: Writes,
    private readonly run: ReportingRun,
    holdMs = FIRST_REPORT_HOLD_MS,
  ) {
    this.holdUntil = Date.now() + holdMs;
  }

  progress(update: ProgressUpdate): Promise<void> {
    return this.report((known) => this.writeProgress(update, known));
  }

  message(message: string): Promise<void> {
    return this.report((known) => this.writeMessage(message, known));
  }

  /** Writes a held report now (before the run asks for input or parks: what it reported comes first). */
  async flush(): Promise<void> {
    if (this.held) {
      clearTimeout(this.held);
      this.held = undefined;
      this.writeHeld().catch(() => {});
    }
    await this.chain;
  }

  /**
   * The run is ending: a held report is left to the outcome's write (it carries `reported`), later reports are not
   * written, and this waits for the writes under way. `flushHeld` (a parked run, which has no outcome) writes it.
   */
  async settle(flushHeld = false): Promise<void> {
    if (flushHeld) await this.flush();
    clearTimeout(this.held);
    this.held = undefined;
    this.closed = true;
    await this.chain;
  }

  private report(write: (known: TaskRecord) => Promise<TaskRecord | void>): Promise<void> {
    if (this.closed) return Promise.resolve();
    const wait = this.holdUntil - Date.now();
    if (wait <= 0 && !this.held) return this.enqueue(write);
    // Held: the latest report (in `reported`) is written when the hold ends, unless the run ends first.
    this.held ??= setTimeout(
      () => {
        this.held = undefined;
        this.writeHeld().catch(() => {});
      },
      Math.max(0, wait),
    );
    return Promise.resolve();
  }

  private writeHeld(): Promise<void> {
    const reported = this.run.reported;
    if (reported?.progress !== undefined) {
      const { progress, message } = reported;
      return this.enqueue((known) =>
        this.writeProgress(message === undefined ? progress : { ...progress, message }, known),
      );
    }
    const message = reported?.message;
    return message === undefined ? Promise.resolve() : this.enqueue((known) => this.writeMessage(message, known));
  }

  private writeProgress(update: ProgressUpdate, known: TaskRecord): Promise<TaskRecord | void> {
    return this.engine.reportProgress(this.run.taskId, update, this.run.attempt, known);
  }

  private writeMessage(message: string, known: TaskRecord): Promise<TaskRecord | void> {
    return this.engine.setStatusMessage(this.run.taskId, message, this.run.attempt, known);
  }

  private enqueue(write: (known: TaskRecord) => Promise<TaskRecord | void>): Promise<void> {
    const written = this.chain.then(async () => {
      const record = await write(this.run.latest);
      if (record && record.version > this.run.latest.version) this.run.latest = record;
    });
    // A failed write does not stop the next; its own caller hears of it.
    this.chain = written.catch(() => {});
    return written;
  }
}
