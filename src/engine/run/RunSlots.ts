import type { TaskRecord } from '../record/TaskRecord.js';

/** Per-tool limits on tasks running at once: by tool name, or a lookup. */
export type ToolConcurrency = Readonly<Record<string, number>> | ((toolName: string) => number | undefined);

export interface RunSlotsOptions {
  /** Slots in all. */
  concurrency: number;
  /** Slots one owner may hold at once. Default: three quarters of `concurrency` (at least 1). */
  maxPerOwner?: number;
  /** Tasks of one tool running at once; tools not named are limited only by the slots. */
  toolConcurrency?: ToolConcurrency;
}

/** The tool a task runs (`tools/call`), if any: per-tool limits apply to it. */
export function toolOf(task: Pick<TaskRecord, 'request'>): string | undefined {
  const name = task.request.params['name'];
  return task.request.method === 'tools/call' && typeof name === 'string' ? name : undefined;
}

/** The default share of the slots one owner may hold: the rest stays free for other owners' tasks. */
export function defaultMaxPerOwner(concurrency: number): number {
  return Math.max(1, concurrency - Math.ceil(concurrency / 4));
}

/**
 * Executors' accounting of running tasks by owner and tool. An owner never holds more than `maxPerOwner` slots, so a
 * task of another owner finds a free slot at once even while one owner has a long backlog; a tool never runs more
 * than its limit at once.
 */
export class RunSlots {
  readonly concurrency: number;
  readonly maxPerOwner: number;
  private readonly toolLimit: (toolName: string) => number | undefined;
  private readonly byOwner = new Map<string, number>();
  private readonly byTool = new Map<string, number>();
  private total = 0;

  constructor(options: RunSlotsOptions) {
    this.concurrency = Math.max(1, options.concurrency);
    this.maxPerOwner = Math.max(
      1,
      Math.min(this.concurrency, options.maxPerOwner ?? defaultMaxPerOwner(this.concurrency)),
    );
    const tools = options.toolConcurrency;
    this.toolLimit = typeof tools === 'function' ? tools : (name) => tools?.[name];
  }

  get running(): number {
    return this.total;
  }

  /** Tasks of `owner` running now. */
  runningFor(owner: string): number {
    return this.byOwner.get(owner) ?? 0;
  }

  /** Whether any slot is free. */
  get hasFree(): boolean {
    return this.total < this.concurrency;
  }

  /** Why `task` cannot take a slot now, or undefined when it can. */
  refusal(task: Pick<TaskRecord, 'owner' | 'request'>): string | undefined {
    if (!this.hasFree) return 'every slot is taken';
    if (this.runningFor(task.owner) >= this.maxPerOwner)
      return `its owner already runs ${this.maxPerOwner} tasks, its share of the slots`;
    const tool = toolOf(task);
    const limit = tool === undefined ? undefined : this.limitOf(tool);
    if (limit !== undefined && (this.byTool.get(tool as string) ?? 0) >= limit)
      return `tool '${tool}' already runs ${limit} tasks, its concurrency limit`;
    return undefined;
  }

  /** The limit of a tool, if it has one. */
  limitOf(toolName: string): number | undefined {
    const limit = this.toolLimit(toolName);
    return limit === undefined ? undefined : Math.max(1, limit);
  }

  take(task: Pick<TaskRecord, 'owner' | 'request'>): void {
    this.total += 1;
    bump(this.byOwner, task.owner, 1);
    const tool = toolOf(task);
    if (tool !== undefined) bump(this.byTool, tool, 1);
  }

  release(task: Pick<TaskRecord, 'owner' | 'request'>): void {
    this.total -= 1;
    bump(this.byOwner, task.owner, -1);
    const tool = toolOf(task);
    if (tool !== undefined) bump(this.byTool, tool, -1);
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
