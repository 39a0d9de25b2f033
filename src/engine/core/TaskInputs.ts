import type { Clock } from '../contracts/Clock.js';
import { checkDepth, checkSize, type EngineLimits } from './EngineLimits.js';
import * as offers from './offers.js';
import type { TaskAccess } from './TaskAccess.js';
import { TaskNotFoundError } from '../record/TaskError.js';
import type { RunHandover, TaskMaintenance } from './TaskMaintenance.js';
import type { InputAnswer, TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';
import * as transitions from '../record/transitions.js';
import type { InputRequest } from '../record/TaskRecord.js';

/**
 * What the work asks of its requestor and how it waits for it: input requests, suspension and parking (durable
 * timers included), the standing offers of workflow tasks, and the requestor's answers to them.
 */
export class TaskInputs {
  constructor(
    private readonly access: TaskAccess,
    private readonly clock: Clock,
    private readonly limits: EngineLimits,
    private readonly handover: Pick<RunHandover, 'lease' | 'submit'>,
    private readonly maintenance: Pick<TaskMaintenance, 'schedule'>,
  ) {}

  /**
   * Records answers to outstanding input requests and open offers, once `visible` (the owner check) passed. Other
   * keys are ignored (spec E12); once no request remains, the task returns to `working` (spec R26) and is handed to
   * the executor again. An answered offer cuts a parked sleep short.
   */
  async answer(
    answers: Record<string, InputAnswer>,
    visible: () => Promise<TaskRecord>,
  ): Promise<{ accepted: string[] }> {
    for (const answer of Object.values(answers)) checkDepth(this.limits, 'input', answer);
    const { taskId } = await visible();
    for (const answer of Object.values(answers)) checkSize(this.limits, 'input', answer);
    let accepted: string[] = [];
    let resumed = false;
    const { record: next } = await this.access.update(taskId, (record) => {
      const change = transitions.answer(record, answers, this.handover.lease(this.clock.now()));
      accepted = change?.accepted ?? [];
      resumed = change?.resumed ?? false;
      return change?.record ?? null;
    });
    if (resumed) await this.handover.submit(next);
    return { accepted };
  }

  /** Adds outstanding input requests and moves the task to `input_required` (spec R23). Returns their keys. */
  requestInput(taskId: string, requests: InputRequest[], attempt?: number): Promise<string[]> {
    return this.updateKeyed(taskId, (record) => {
      ofAttempt(record, attempt);
      return transitions.addInputRequests(record, requests, this.clock.now());
    });
  }

  /**
   * Asks the question `key` for the run `attempt` unless the task holds it already (asked or answered), so asking
   * again after a lost reply, or after the store lost the question, never asks twice.
   */
  async askOnce(taskId: string, key: string, request: InputRequest, attempt: number): Promise<void> {
    await this.access.update(taskId, (record) => {
      ofAttempt(record, attempt);
      if (key in record.inputRequests || record.inputAnswers[key] !== undefined) return null;
      return transitions.addInputRequests(record, [request], this.clock.now(), () => key).record;
    });
  }

  /**
   * Parks a task for input without holding its work in memory: adds the requests, moves it to `input_required`,
   * merges `meta`, drops the runner's lease (nothing runs, so nothing can be stale) and clears earlier answers.
   */
  suspend(
    taskId: string,
    requests: InputRequest[],
    metaFor: (keys: string[]) => Record<string, unknown>,
    attempt?: number,
  ): Promise<string[]> {
    return this.updateKeyed(taskId, (record) => {
      ofAttempt(record, attempt);
      return transitions.suspend(record, requests, metaFor, this.clock.now());
    });
  }

  /**
   * Suspends the run `attempt` of a workflow task so that it holds nothing (no runner, lease or memory): until `wakeAt`
   * (a durable timer any instance honours) and/or until `requests` are answered (`input_required`, as for `suspend`).
   * Whichever comes first runs the work again from the top. Throws StaleLeaseError for a superseded attempt.
   */
  async park(taskId: string, attempt: number, options: transitions.ParkOptions): Promise<string[]> {
    const { wakeAt } = options;
    const { store } = this.access;
    // The timer goes in first: a crash before the record is written leaves a timer that finds nothing to wake.
    if (wakeAt !== undefined) await this.access.guard(async () => store.journal?.setWake(taskId, wakeAt));
    let keys: string[] = [];
    const { record, changed } = await this.access.update(taskId, (current) => {
      const change = transitions.park(current, attempt, options, this.clock.now());
      keys = change?.keys ?? [];
      return change?.record ?? null;
    });
    // A sleep parked just after an offer was answered wakes at once instead.
    const effective = changed ? record.wakeAt : wakeAt;
    if (effective !== undefined && effective !== wakeAt) {
      await this.access.guard(async () => store.journal?.setWake(taskId, effective));
    }
    // Awaited only when the executor takes the timer: the in-process one is armed before this returns.
    const handed = effective === undefined ? undefined : this.maintenance.schedule({ taskId, wakeAt: effective });
    if (handed) await handed;
    return keys;
  }

  /** Registers the standing offer `key` of the run `attempt` (the first offer of a key stands); see offers.ts. */
  async offer(taskId: string, attempt: number, key: string, request: InputRequest): Promise<void> {
    await this.access.update(taskId, (record) => offers.addOffer(record, attempt, key, request, this.clock.now()));
  }

  /** Drops the answer to the offer `key` once the run `attempt` has journaled that it consumed it. */
  async consumeOffer(taskId: string, attempt: number, key: string): Promise<void> {
    await this.access.update(taskId, (record) => offers.consumeOffer(record, attempt, key));
  }

  /** Withdraws an outstanding input request (the work stopped waiting for it). */
  async withdrawInput(taskId: string, key: string): Promise<void> {
    await this.access
      .update(taskId, (record) => transitions.withdrawInput(record, key))
      .catch((error: unknown) => {
        if (!(error instanceof TaskNotFoundError)) throw error;
      });
  }

  /** An update whose change also yields input keys (added or taken); returns the keys of the change that landed. */
  private async updateKeyed(
    taskId: string,
    change: (record: TaskRecord) => transitions.KeyedChange | null,
  ): Promise<string[]> {
    let keys: string[] = [];
    await this.access.update(taskId, (record) => {
      const result = change(record);
      keys = result?.keys ?? [];
      return result?.record ?? null;
    });
    return keys;
  }
}

/**
 * A run superseded by a later claim asks nothing more of the requestor (it may not have heard of that claim yet); on a
 * terminal task the transition itself declines, as `park` does.
 */
function ofAttempt(record: TaskRecord, attempt: number | undefined): void {
  if (!isTerminal(record.status)) transitions.requireAttempt(record, attempt);
}
