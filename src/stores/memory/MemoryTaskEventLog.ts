import type { EventAppendResult, LoggedEvent, NewLoggedEvent, TaskEventLog } from '../../engine/index.js';

interface TaskLog {
  /** Each entry as JSON text, so what is read back is always a fresh copy. */
  entries: string[];
  keys: Map<string, number>;
}

/** Each task's event log in process memory. */
export class MemoryTaskEventLog implements TaskEventLog {
  private readonly logs = new Map<string, TaskLog>();

  async init(): Promise<void> {}

  async append(taskId: string, event: NewLoggedEvent, maxEvents: number): Promise<EventAppendResult> {
    let log = this.logs.get(taskId);
    const known = event.key === undefined ? undefined : log?.keys.get(event.key);
    if (known !== undefined) return { appended: false, reason: 'duplicate', seq: known };
    if ((log?.entries.length ?? 0) >= maxEvents) return { appended: false, reason: 'limit' };
    if (!log) this.logs.set(taskId, (log = { entries: [], keys: new Map() }));
    const seq = log.entries.length;
    const entry: LoggedEvent = { seq, type: event.type, data: event.data, at: event.at };
    log.entries.push(JSON.stringify(entry));
    if (event.key !== undefined) log.keys.set(event.key, seq);
    return { appended: true, seq };
  }

  async read(taskId: string, from: number, limit: number): Promise<LoggedEvent[]> {
    const entries = this.logs.get(taskId)?.entries ?? [];
    return entries.slice(Math.max(0, from), Math.max(0, from) + limit).map((text) => JSON.parse(text) as LoggedEvent);
  }

  async length(taskId: string): Promise<number> {
    return this.logs.get(taskId)?.entries.length ?? 0;
  }

  async remove(taskId: string): Promise<void> {
    this.logs.delete(taskId);
  }
}
