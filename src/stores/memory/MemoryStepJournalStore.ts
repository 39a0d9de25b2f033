import type { StepJournalStore, StepRow, WakeEntry } from '../../engine/index.js';

/** The step journal in process memory: rows kept as JSON text, so what is read back is always a fresh copy. */
export class MemoryStepJournalStore implements StepJournalStore {
  private readonly fences = new Map<string, number>();
  private readonly rows = new Map<string, Map<string, string>>();
  private readonly wakes = new Map<string, number>();

  async init(): Promise<void> {}

  async fence(taskId: string, attempt: number): Promise<boolean> {
    if ((this.fences.get(taskId) ?? 0) > attempt) return false;
    this.fences.set(taskId, attempt);
    return true;
  }

  async read(taskId: string): Promise<StepRow[]> {
    return [...(this.rows.get(taskId)?.values() ?? [])].map((text) => JSON.parse(text) as StepRow);
  }

  async write(taskId: string, attempt: number, row: StepRow): Promise<boolean> {
    if (this.fences.get(taskId) !== attempt) return false;
    let rows = this.rows.get(taskId);
    if (!rows) this.rows.set(taskId, (rows = new Map()));
    rows.set(row.name, JSON.stringify(row));
    return true;
  }

  async remove(taskId: string): Promise<void> {
    this.fences.delete(taskId);
    this.rows.delete(taskId);
    this.wakes.delete(taskId);
  }

  async setWake(taskId: string, wakeAt: number): Promise<void> {
    this.wakes.set(taskId, wakeAt);
  }

  async clearWake(taskId: string, wakeAt: number): Promise<void> {
    if (this.wakes.get(taskId) === wakeAt) this.wakes.delete(taskId);
  }

  async due(until: number, limit: number): Promise<WakeEntry[]> {
    const due: WakeEntry[] = [];
    for (const [taskId, wakeAt] of this.wakes) if (wakeAt <= until) due.push({ taskId, wakeAt });
    return due.sort((a, b) => a.wakeAt - b.wakeAt).slice(0, limit);
  }
}
