import { RunSlots, toolOf, type TaskRecord, type ToolConcurrency } from '../../engine/index.js';
import type { ToolSlots } from './ToolSlots.js';

type Run = Pick<TaskRecord, 'taskId' | 'owner' | 'request'>;

/**
 * Which queued runs a worker may start now: its own slots shared fairly across owners (no owner holds more than its
 * share of this worker's slots) and the tools' concurrency limits across every worker (through Redis). A run that is
 * refused goes back to the queue for a while; it is never dropped.
 */
export class RunAdmission {
  private readonly slots: RunSlots;
  private readonly admitted = new Map<string, Run>();

  constructor(
    options: { concurrency: number; maxRunningPerOwner?: number; toolConcurrency?: ToolConcurrency },
    private readonly tools: ToolSlots,
  ) {
    this.slots = new RunSlots({
      concurrency: options.concurrency,
      ...(options.maxRunningPerOwner !== undefined && { maxPerOwner: options.maxRunningPerOwner }),
      ...(options.toolConcurrency !== undefined && { toolConcurrency: options.toolConcurrency }),
    });
  }

  /** Takes the slots `run` needs, or says why it must wait. */
  async admit(run: Run): Promise<string | undefined> {
    if (this.admitted.has(run.taskId)) return undefined;
    if (this.slots.runningFor(run.owner) >= this.slots.maxPerOwner) {
      return `its owner already runs ${this.slots.maxPerOwner} tasks on this worker, its share of the slots`;
    }
    // Held synchronously before the Redis round trip, so concurrent jobs of one owner cannot both pass.
    this.slots.take(run);
    this.admitted.set(run.taskId, run);
    const tool = toolOf(run);
    const limit = tool === undefined ? undefined : this.slots.limitOf(tool);
    if (tool === undefined || limit === undefined) return undefined;
    let refusal: string | undefined;
    try {
      if (!(await this.tools.acquire(tool, limit, run.taskId)))
        refusal = `tool '${tool}' already runs ${limit} tasks, its concurrency limit`;
    } catch (error) {
      refusal = `the tool's concurrency limit could not be checked: ${String(error)}`;
    }
    if (refusal) this.forget(run.taskId);
    return refusal;
  }

  /** Frees what `admit` took for the task. */
  async release(taskId: string): Promise<void> {
    if (!this.forget(taskId)) return;
    await this.tools.release(taskId);
  }

  /** Keeps the tool runs of this worker's tasks alive (called on the lease tick). */
  renew(): Promise<void> {
    return this.tools.renew();
  }

  private forget(taskId: string): boolean {
    const run = this.admitted.get(taskId);
    if (!run) return false;
    this.admitted.delete(taskId);
    this.slots.release(run);
    return true;
  }
}
