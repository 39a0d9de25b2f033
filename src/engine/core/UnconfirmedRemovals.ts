import type { EngineLogger } from '../contracts/EngineHooks.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import type { TaskAccess } from './TaskAccess.js';

/** Ids held at once; past it the oldest is given up (logged): an outage that long refuses creations anyway. */
const MAX_HELD = 10_000;
/** How often the store is asked again, and for how long, before an id is given up (logged). */
const INTERVAL_MS = 250;
const GIVE_UP_MS = 10 * 60_000;

/**
 * Creations refused because their insert's outcome stayed unknown (UnconfirmedInsertError): once the store answers
 * again, a record that was stored after all is removed, so a requestor told "not created" finds no task running
 * behind its back. Held in this process only: a process that dies meanwhile leaves such a task to its ttl.
 */
export class UnconfirmedRemovals {
  private readonly held = new Map<string, { record: TaskRecord; since: number }>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly access: TaskAccess,
    private readonly logger: EngineLogger,
  ) {}

  add(record: TaskRecord): void {
    if (this.stopped) return;
    if (this.held.size >= MAX_HELD) {
      const [oldest] = this.held.keys();
      if (oldest !== undefined) this.giveUp(oldest);
    }
    this.held.set(record.taskId, { record, since: Date.now() });
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.stopped || this.held.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick().finally(() => this.schedule());
    }, INTERVAL_MS);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    for (const [taskId, { record, since }] of [...this.held]) {
      if (this.stopped) return;
      try {
        const stored = await this.access.read(taskId);
        if (stored && stored.owner === record.owner && stored.createdAt === record.createdAt) {
          await this.access.guard(() => this.access.store.delete(taskId));
          this.logger.warn({ taskId, owner: record.owner }, 'removed a task whose creation was refused unconfirmed');
        }
        this.held.delete(taskId);
      } catch {
        if (Date.now() - since > GIVE_UP_MS) this.giveUp(taskId);
        // The store is still away: the rest wait for the next round.
        return;
      }
    }
  }

  private giveUp(taskId: string): void {
    const entry = this.held.get(taskId);
    this.held.delete(taskId);
    this.logger.warn(
      { taskId, owner: entry?.record.owner },
      'gave up removing a task whose creation was refused unconfirmed; it expires with its ttl if it was stored',
    );
  }
}
