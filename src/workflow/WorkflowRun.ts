import { AsyncLocalStorage } from 'node:async_hooks';

import {
  StaleLeaseError,
  StepJournal,
  type Clock,
  type InputAnswer,
  type StandingOffer,
  type TaskEngine,
  type TaskWorkContext,
} from '../engine/index.js';
import type { ElicitOutcome, InputRequest } from './Step.js';

/** The part of the engine a workflow run uses. */
export type WorkflowEngine = Pick<TaskEngine, 'store' | 'clock' | 'park' | 'offer' | 'consumeOffer' | 'emitEvent'>;

/** Where a run stopped: until a time, and/or until the question of step `stepName` is answered. */
export interface Suspension {
  wakeAt?: number;
  request?: InputRequest;
  stepName?: string;
  /** A sleep: an answer to an offer ends it. */
  sleep?: boolean;
}

/** What a step sees of the requestor's answer: its result, or its JSON-RPC error as an `error` outcome. */
export function answerResponse(answer: InputAnswer): ElicitOutcome {
  return 'result' in answer ? answer.result : { outcome: 'error', error: answer.error };
}

/** Thrown through the handler when the run suspends or is superseded; the handler must let it pass. */
export class WorkflowSuspended extends Error {
  constructor() {
    super('The workflow run suspended; the task resumes it later');
    this.name = 'WorkflowSuspended';
  }
}

/** Task meta key of the question keys of a parked run: task input key → step name. */
const INPUTS_META = 'workflowInputs';

/**
 * The run whose work is executing. The tool's handler is called by the SDK server inside the internal call this run's
 * work makes (no socket, no queue between them), so it runs in the async context `within` opened; the SDK's handler
 * context has no slot to carry the run itself, and a token in the request's `_meta` would need a registry of runs.
 */
const executing = new AsyncLocalStorage<WorkflowRun>();

/**
 * One run of a workflow task in this process: its journal (opened on the first step), and how it stopped. Its work
 * runs `within` it (journaledWork), where the tool's handler finds it (`WorkflowRun.current()`).
 */
export class WorkflowRun {
  suspension: Suspension | undefined;
  /** A newer run took the task over: this one stops without writing anything more. */
  superseded = false;
  private opening: Promise<StepJournal> | undefined;

  constructor(
    private readonly engine: WorkflowEngine,
    readonly context: TaskWorkContext,
    /** Most journal rows the task may hold (`MAX_STEPS_PER_TASK`). */
    readonly maxSteps: number,
  ) {}

  /** The run whose work called the current tool handler; undefined for a call that is not a task run. */
  static current(): WorkflowRun | undefined {
    return executing.getStore();
  }

  /** Runs `work` as this run's: every tool handler it calls finds this run. */
  within<T>(work: () => Promise<T>): Promise<T> {
    return executing.run(this, work);
  }

  get taskId(): string {
    return this.context.task.taskId;
  }

  get clock(): Clock {
    return this.engine.clock;
  }

  /** Whether the handler has to stop now (suspended, superseded or cancelled). */
  get stopped(): boolean {
    return this.suspension !== undefined || this.superseded || this.context.signal.aborted;
  }

  /** The journal of this attempt: claims the task's fence, then records answers that arrived while parked. */
  journal(): Promise<StepJournal> {
    this.opening ??= this.open();
    return this.opening;
  }

  suspend(suspension: Suspension): never {
    this.suspension = suspension;
    throw new WorkflowSuspended();
  }

  /** Marks the run superseded when `error` says so and rethrows it as the stop signal. */
  stale(error: unknown): never {
    if (error instanceof StaleLeaseError) {
      this.superseded = true;
      throw new WorkflowSuspended();
    }
    throw error;
  }

  /** Parks the task as the run left it: nothing is held until the timer fires or the question is answered. */
  async park(): Promise<void> {
    const suspension = this.suspension;
    if (!suspension || this.superseded) return;
    const { wakeAt, request, stepName, sleep } = suspension;
    try {
      await this.engine.park(this.taskId, this.context.task.attempts, {
        ...(wakeAt !== undefined && { wakeAt }),
        ...(request && { requests: [request] }),
        ...(sleep && { endsOnOfferAnswer: true }),
        metaFor: (keys) => ({ [INPUTS_META]: keys[0] && stepName ? { [keys[0]]: stepName } : {} }),
      });
    } catch (error) {
      if (!(error instanceof StaleLeaseError)) throw error;
    }
  }

  /** Registers the offer `key` on the task record (once; the journal row is written first). */
  async offer(key: string, request: InputRequest): Promise<void> {
    if (this.context.task.offers?.[key]) return;
    await this.engine.offer(this.taskId, this.context.task.attempts, key, request).catch((error) => this.stale(error));
  }

  /**
   * Emits an event for the task (checked against its type, bounded per task). With `key`, a replay of the run stores
   * nothing new (the log keeps the first emit of a key). Returns the event's `seq` in the task's log.
   */
  async emit(type: string, data: Record<string, unknown>, key?: string): Promise<number> {
    const emitted = await this.engine
      .emitEvent(this.taskId, { type, data, ...(key !== undefined && { key }) }, this.context.task.attempts)
      .catch((error) => this.stale(error));
    return emitted.seq;
  }

  /** The task's offers as stored now (answers arrive while the run goes on). */
  async offers(): Promise<Record<string, StandingOffer>> {
    return (await this.engine.store.get(this.taskId))?.offers ?? {};
  }

  /** Drops the answer to `key` from the record once a journaled check consumed it. */
  async consumeOffer(key: string): Promise<void> {
    await this.engine.consumeOffer(this.taskId, this.context.task.attempts, key).catch((error) => this.stale(error));
  }

  private async open(): Promise<StepJournal> {
    const store = this.engine.store.journal;
    if (!store) throw new Error('The task store keeps no step journal');
    const task = this.context.task;
    const journal = await StepJournal.open(store, task.taskId, task.attempts, this.engine.clock).catch((error) =>
      this.stale(error),
    );
    const meta = task.meta[INPUTS_META];
    const inputs = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
    for (const [key, stepName] of Object.entries(inputs)) {
      const answer = task.inputAnswers[key];
      if (answer === undefined || typeof stepName !== 'string') continue;
      await journal.answerElicit(stepName, answerResponse(answer));
    }
    // A consumed answer still on the record (the run stopped between the two writes) would cut every sleep short.
    for (const [key, offer] of Object.entries(task.offers ?? {})) {
      if (offer.answer !== undefined && journal.consumed(key)) await this.consumeOffer(key);
    }
    return journal;
  }
}
