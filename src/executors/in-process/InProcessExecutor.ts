import { randomUUID } from 'node:crypto';

import Denque from 'denque';

import {
  RunSlots,
  TaskRunner,
  type EngineHandle,
  type EngineLogger,
  type Executor,
  type ExecutorLoad,
  type RunReservation,
  type TaskRecord,
  type TaskWork,
  type ToolConcurrency,
} from '../../engine/index.js';

export interface InProcessExecutorOptions {
  engine: EngineHandle;
  work: TaskWork;
  /** Tasks running at once; further tasks wait, shared fairly across owners. Default 16. */
  concurrency?: number;
  /** Slots one owner may hold at once. Default: three quarters of `concurrency` (at least 1). */
  maxRunningPerOwner?: number;
  /** Tasks of one tool running at once, by tool name (the tool policy's `concurrency`). */
  toolConcurrency?: ToolConcurrency;
  runnerId?: string;
  logger?: EngineLogger;
}

/** Shutdown reason given to work still running when the executor closes. */
export class ExecutorClosedError extends Error {
  constructor() {
    super('The executor is shutting down');
  }
}

/** A task waiting for a slot, as submitted: its claim is tried on this record first. */
type Waiting = TaskRecord;

/**
 * Runs tasks in this process with an AbortSignal each and a concurrency limit, through the engine's run path
 * (TaskRunner): it renews its leases while it holds tasks, so if the process dies the engine's recovery notices within
 * one lease, and a run another runner has taken over (after a lapsed lease) is aborted.
 *
 * Slots are shared across owners: each owner has its own queue, a free slot goes to the waiting owner with the fewest
 * running tasks (ties: the one served longest ago), and no owner holds more than `maxRunningPerOwner` slots, so one
 * owner's backlog of long tasks never keeps another owner's task waiting for a slot. Within an owner tasks start in
 * submission order, except that a task whose tool is at its concurrency limit lets the owner's next task pass.
 */
export class InProcessExecutor implements Executor {
  readonly runnerId: string;
  readonly leasesOnCreate = true;
  private readonly runner: TaskRunner;
  private readonly slots: RunSlots;
  /** Waiting tasks per owner. */
  private readonly waiting = new Map<string, Waiting[]>();
  /**
   * The owners with waiting tasks, least recently served first (served owners move to the end). A queue, not the
   * map's order: moving an owner by delete-and-set leaves a slot at the map's front that every later scan walks past.
   */
  private readonly rounds = new Denque<string>();
  private waitingCount = 0;
  /** One controller per run: two runs of one task (a superseded one still ending) are both reached at close. */
  private readonly running = new Set<AbortController>();
  private readonly finished = new Set<Promise<void>>();
  private closed = false;

  constructor(options: InProcessExecutorOptions) {
    this.slots = new RunSlots({
      concurrency: options.concurrency ?? 16,
      ...(options.maxRunningPerOwner !== undefined && { maxPerOwner: options.maxRunningPerOwner }),
      ...(options.toolConcurrency !== undefined && { toolConcurrency: options.toolConcurrency }),
    });
    this.runnerId = options.runnerId ?? `in-process:${randomUUID()}`;
    this.runner = new TaskRunner({
      engine: options.engine,
      runnerId: this.runnerId,
      work: options.work,
      // Queued tasks were leased at creation: their leases are renewed while they wait for a slot.
      holdsLeases: () => this.running.size > 0 || this.waitingCount > 0,
      ...(options.logger !== undefined && { logger: options.logger }),
    });
  }

  get activeCount(): number {
    return this.running.size;
  }

  get queuedCount(): number {
    return this.waitingCount;
  }

  load(): ExecutorLoad {
    return { running: this.running.size, waiting: this.waitingCount };
  }

  async submit(task: TaskRecord): Promise<void> {
    if (this.closed) throw new ExecutorClosedError();
    const queue = this.waiting.get(task.owner);
    if (queue) queue.push(task);
    else {
      this.waiting.set(task.owner, [task]);
      this.rounds.push(task.owner);
    }
    this.waitingCount += 1;
    this.runner.start();
    this.pump();
  }

  reserve(task: TaskRecord): RunReservation | undefined {
    // Only a task that would start now: a reservation never passes a task waiting for a slot.
    if (this.closed || this.waitingCount > 0 || this.slots.refusal(task) !== undefined) return undefined;
    this.slots.take(task);
    this.runner.start();
    // Heard from before the insert on: a change between the insert and the run's own observer (a cancel) is not missed.
    const watch = this.runner.watchClaim(task.taskId);
    let open = true;
    const release = () => {
      if (!open) return;
      open = false;
      watch.stop();
      this.slots.release(task);
      this.pump();
    };
    return {
      start: (stored) => {
        if (!open) return;
        if (this.closed) {
          release();
          throw new ExecutorClosedError();
        }
        open = false;
        this.launch(stored, (controller) => this.runner.run(stored, controller, watch));
      },
      release,
    };
  }

  /** Aborts running work and stops; tasks it held are recovered by the engine once their leases lapse. */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.clear();
    this.rounds.clear();
    this.waitingCount = 0;
    for (const controller of this.running) controller.abort(new ExecutorClosedError());
    await Promise.allSettled([...this.finished]);
    this.runner.stop();
  }

  private pump(): void {
    for (let next = this.next(); next && !this.closed; next = this.next()) {
      const task = next;
      this.slots.take(task);
      this.launch(task, (controller) => this.runner.claimAndRun(task.taskId, controller, task));
    }
  }

  /** Runs a task that holds a slot; once it ends, frees the slot and starts what waits. */
  private launch(task: TaskRecord, run: (controller: AbortController) => Promise<unknown>): void {
    const controller = new AbortController();
    this.running.add(controller);
    const done = run(controller)
      .then(() => undefined)
      .finally(() => {
        this.running.delete(controller);
        this.slots.release(task);
        this.finished.delete(done);
        this.pump();
      });
    this.finished.add(done);
  }

  /** Takes the next task to start out of the queues, if a slot is free for one. */
  private next(): Waiting | undefined {
    if (this.closed || !this.slots.hasFree) return undefined;
    let chosen: { round: number; index: number } | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    // Least recently served first, so on a tie the earlier owner wins, and an owner running nothing can't be beaten:
    // the scan stops there, after at most the owners that hold slots (or whose tasks all wait on a tool's limit).
    for (let round = 0; round < this.rounds.length && fewest > 0; round++) {
      const owner = this.rounds.peekAt(round) as string;
      const running = this.slots.runningFor(owner);
      if (running >= fewest || running >= this.slots.maxPerOwner) continue;
      const queue = this.waiting.get(owner) as Waiting[];
      const index = queue.findIndex((task) => this.slots.refusal(task) === undefined);
      if (index < 0) continue;
      chosen = { round, index };
      fewest = running;
    }
    if (!chosen) return undefined;
    const owner = this.rounds.removeOne(chosen.round) as string;
    const queue = this.waiting.get(owner) as Waiting[];
    const [task] = queue.splice(chosen.index, 1);
    if (queue.length > 0) this.rounds.push(owner);
    else this.waiting.delete(owner);
    this.waitingCount -= 1;
    return task;
  }
}
