import { defaultMaxPerOwner, toolOf, type TaskRecord, type ToolConcurrency } from '../../engine/index.js';
import type { FleetLimit, FleetSlots } from './FleetSlots.js';

type Run = Pick<TaskRecord, 'taskId' | 'owner' | 'request'>;

export interface RunAdmissionOptions {
  /** This worker's slots. */
  concurrency: number;
  /** Running tasks one owner may hold across every worker of the queue. Default: three quarters of their slots. */
  maxRunningPerOwner?: number;
  toolConcurrency?: ToolConcurrency;
}

/**
 * Which queued runs a worker may start now. Both limits count across every worker of the queue (in its Redis): an
 * owner's share of the running slots, so adding workers never lets one owner crowd out the others, and the tools'
 * concurrency limits. A run that is refused goes back to the queue for a while; it is never dropped.
 */
export class RunAdmission {
  private readonly concurrency: number;
  private readonly explicitOwnerCap: number | undefined;
  private readonly toolLimit: (tool: string) => number | undefined;
  private readonly admitted = new Map<string, Run>();
  private readonly byOwner = new Map<string, number>();
  /** The slots of every live worker together, as last read (this worker's until then). */
  private fleetSlots: number;

  constructor(
    options: RunAdmissionOptions,
    private readonly fleet: FleetSlots,
  ) {
    this.concurrency = Math.max(1, options.concurrency);
    this.fleetSlots = this.concurrency;
    this.explicitOwnerCap =
      options.maxRunningPerOwner === undefined ? undefined : Math.max(1, options.maxRunningPerOwner);
    const tools = options.toolConcurrency;
    this.toolLimit = typeof tools === 'function' ? tools : (name) => tools?.[name];
  }

  /** The running tasks one owner may hold across the workers. */
  get ownerCap(): number {
    return this.explicitOwnerCap ?? defaultMaxPerOwner(Math.max(this.concurrency, this.fleetSlots));
  }

  /** Records the slots of the live workers together (read on this worker's registration). */
  setFleetSlots(slots: number): void {
    if (Number.isFinite(slots) && slots > 0) this.fleetSlots = slots;
  }

  /** Takes the slots `run` needs, or says why it must wait. */
  async admit(run: Run): Promise<string | undefined> {
    if (this.admitted.has(run.taskId)) return undefined;
    const ownerCap = this.ownerCap;
    // This worker's own runs of the owner already fill the share: no need to ask Redis.
    if ((this.byOwner.get(run.owner) ?? 0) >= ownerCap) return ownerRefusal(ownerCap);
    // Held before the Redis round trip, so concurrent jobs of one owner in this worker cannot both pass.
    this.hold(run);
    const limits: FleetLimit[] = [{ kind: 'owner', name: run.owner, limit: ownerCap }];
    const tool = toolOf(run);
    const toolLimit = tool === undefined ? undefined : this.toolLimit(tool);
    if (tool !== undefined && toolLimit !== undefined)
      limits.push({ kind: 'tool', name: tool, limit: Math.max(1, toolLimit) });
    let refusal: string | undefined;
    try {
      const reached = await this.fleet.acquire(run.taskId, limits);
      if (reached?.kind === 'owner') refusal = ownerRefusal(reached.limit);
      else if (reached) refusal = `tool '${reached.name}' already runs ${reached.limit} tasks, its concurrency limit`;
    } catch (error) {
      refusal = `the shared run limits could not be checked: ${String(error)}`;
    }
    if (refusal) this.forget(run.taskId);
    return refusal;
  }

  /** Frees what `admit` took for the task. */
  async release(taskId: string): Promise<void> {
    if (!this.forget(taskId)) return;
    await this.fleet.release(taskId);
  }

  /** Keeps the shared counts of this worker's runs alive (called on the lease tick). */
  renew(): Promise<void> {
    return this.fleet.renew();
  }

  private hold(run: Run): void {
    this.admitted.set(run.taskId, run);
    this.byOwner.set(run.owner, (this.byOwner.get(run.owner) ?? 0) + 1);
  }

  private forget(taskId: string): boolean {
    const run = this.admitted.get(taskId);
    if (!run) return false;
    this.admitted.delete(taskId);
    const left = (this.byOwner.get(run.owner) ?? 1) - 1;
    if (left > 0) this.byOwner.set(run.owner, left);
    else this.byOwner.delete(run.owner);
    return true;
  }
}

function ownerRefusal(cap: number): string {
  return `its owner already runs ${cap} tasks across the workers, its share of the slots`;
}
