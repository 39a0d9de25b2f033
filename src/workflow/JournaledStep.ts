import { MAX_OFFERS_PER_TASK, StaleLeaseError, StepSpan, stepEvent, type StepJournal } from '../engine/index.js';
import { parseDuration } from './parseDuration.js';
import type { ElicitOutcome, InputCheck, InputRequest, Step, StepConfig } from './Step.js';
import {
  DuplicateStepError,
  StepResultError,
  TaskTimeoutError,
  UnknownOfferError,
  assertOfferKey,
  isNonRetryable,
  reviveError,
  serializeError,
} from './StepErrors.js';
import {
  DEFAULT_RETRIES,
  backoffDelay,
  journalValue,
  runStepClosure,
  stepArgs,
  type StepClosure,
} from './runStepClosure.js';
import { answerResponse, type Suspension, type WorkflowRun } from './WorkflowRun.js';

/** Largest journaled step result (serialised). */
export const MAX_STEP_RESULT_BYTES = 1024 * 1024;
/** Most journal rows one task may hold, whatever their kind (steps, sleeps, questions, offers, checks). */
export const MAX_STEPS_PER_TASK = 10_000;

/** The step API of a task run: every step goes through the task's journal in the store. */
export class JournaledStep implements Step {
  private readonly used = new Set<string>();

  /** When the whole task must be done by (epoch ms), from the workflow's `timeoutMs`. */
  private readonly deadline: number | undefined;

  constructor(
    private readonly run: WorkflowRun,
    private readonly timeoutMs?: number,
  ) {
    this.deadline = timeoutMs === undefined ? undefined : run.context.task.createdAt + timeoutMs;
  }

  get taskId(): string {
    return this.run.taskId;
  }

  get signal(): AbortSignal {
    return this.run.context.signal;
  }

  idempotencyKey(name: string): string {
    return `${this.run.taskId}:${name}`;
  }

  async do<T>(name: string, configOrFn: StepConfig | StepClosure<T>, maybeFn?: StepClosure<T>): Promise<T> {
    const { config, fn } = stepArgs(configOrFn, maybeFn);
    const journal = await this.enter(name);
    const begin = journal.beginStep(name);
    if (begin.state !== 'run') {
      // A step replayed from the journal costs an event on the run span, not a span of its own.
      stepEvent('mcp.task.step.replayed', { 'mcp.task.step.name': name, 'mcp.task.step.state': begin.state });
    }
    if (begin.state === 'completed') return begin.value as T;
    if (begin.state === 'failed') throw reviveError(begin.error);
    if (begin.state === 'waiting') return this.suspend({ wakeAt: begin.wakeAt });
    const span = new StepSpan(name, begin.attempt);
    try {
      return await span.within(() => this.runStep(name, config, fn, journal, begin.attempt, span));
    } finally {
      span.end();
    }
  }

  private async runStep<T>(
    name: string,
    config: StepConfig,
    fn: StepClosure<T>,
    journal: StepJournal,
    attempt: number,
    span: StepSpan,
  ): Promise<T> {
    let value: unknown;
    try {
      const result = await runStepClosure(name, fn, attempt, this.signal, this.closureTimeout(config.timeoutMs));
      value = this.checked(name, result);
    } catch (error) {
      if (this.signal.aborted || error instanceof StaleLeaseError) throw error;
      const policy = { ...DEFAULT_RETRIES, ...config.retries };
      const terminal = isNonRetryable(error) || attempt > policy.limit;
      span.fail(error, !terminal);
      const retryAtMs = this.run.clock.now() + backoffDelay(attempt, policy);
      const written = await journal.failStep(name, serializeError(error), terminal ? { terminal } : { retryAtMs });
      if (!written) this.run.stale(new StaleLeaseError(this.taskId, `step "${name}" was refused`));
      if (terminal) throw error;
      // The wait before the next attempt is durable: the task holds nothing until then.
      return this.suspend({ wakeAt: retryAtMs });
    }
    if (!(await journal.completeStep(name, value))) {
      this.run.stale(new StaleLeaseError(this.taskId, `step "${name}" was refused`));
    }
    return value as T;
  }

  sleep(name: string, duration: number | string): Promise<void> {
    return this.sleepUntil(name, this.run.clock.now() + parseDuration(duration));
  }

  async sleepUntil(name: string, when: Date | number): Promise<void> {
    const wakeAt = typeof when === 'number' ? when : when.getTime();
    if (!Number.isFinite(wakeAt)) throw new TypeError(`Invalid time for sleep "${name}"`);
    const journal = await this.enter(name);
    const state = await journal.recordSleep(name, wakeAt).catch((error) => this.run.stale(error));
    if (state.state === 'completed') return;
    if (journal.offerCount > 0 && (await this.offerAnswerWaits())) {
      // An answer to an offer wakes the task: the sleep ends now, for good.
      return journal.endSleep(name).catch((error) => this.run.stale(error));
    }
    stepEvent('mcp.task.sleep', {
      'mcp.task.step.name': name,
      'mcp.task.wake_at': new Date(state.wakeAt).toISOString(),
    });
    this.suspend({ wakeAt: state.wakeAt, sleep: true });
  }

  async elicit(name: string, request: InputRequest, options: { timeoutMs?: number } = {}): Promise<ElicitOutcome> {
    const journal = await this.enter(name);
    const deadline = options.timeoutMs === undefined ? undefined : this.run.clock.now() + options.timeoutMs;
    const state = await journal.recordElicit(name, request, deadline).catch((error) => this.run.stale(error));
    if (state.state === 'answered') return state.response as ElicitOutcome;
    if (state.state === 'timed_out') return { outcome: 'timed_out' };
    stepEvent('mcp.task.elicit', { 'mcp.task.step.name': name });
    return this.suspend({
      request: state.request as InputRequest,
      stepName: name,
      ...(state.wakeAt !== undefined && { wakeAt: state.wakeAt }),
    });
  }

  async offer(key: string, request: InputRequest): Promise<void> {
    assertOfferKey(key);
    const journal = await this.enter(key);
    const kind = journal.kindOf(key);
    // The key names a question or another step of an earlier run.
    if (kind !== undefined && kind !== 'offer') throw new DuplicateStepError(key);
    if (kind === undefined) {
      if (journal.offerCount >= MAX_OFFERS_PER_TASK) {
        throw new StepResultError(key, `the task already has ${MAX_OFFERS_PER_TASK} offers`);
      }
      await journal.recordOffer(key, request).catch((error) => this.run.stale(error));
    }
    await this.run.offer(key, request);
  }

  async checkInput(name: string, key: string): Promise<InputCheck> {
    const journal = await this.enter(name);
    const seen = journal.checked(name);
    if (seen) return seen as InputCheck;
    if (journal.kindOf(key) !== 'offer') throw new UnknownOfferError(name, key);
    const answer = journal.consumed(key) ? undefined : (await this.run.offers())[key]?.answer;
    const check: InputCheck =
      answer === undefined ? { state: 'unanswered' } : { state: 'answered', response: answerResponse(answer) };
    await journal.recordCheck(name, key, check).catch((error) => this.run.stale(error));
    if (answer !== undefined) await this.run.consumeOffer(key);
    return check;
  }

  /** A keyed append to the task's event log: the log keeps the first emit of a name, so a replay adds nothing. */
  async emit(name: string, type: string, data: Record<string, unknown>): Promise<void> {
    if (this.run.stopped) {
      this.signal.throwIfAborted();
      this.run.suspend(this.run.suspension ?? {});
    }
    if (this.used.has(name)) throw new DuplicateStepError(name);
    this.used.add(name);
    await this.run.emit(type, data, `step:${name}`);
  }

  async status(message: string): Promise<void> {
    if (this.run.stopped) return;
    await this.run.context.setStatusMessage(message);
  }

  /**
   * Every step starts here: names are unique, a stopped run goes no further (spec R50 for cancellation), and a step
   * that would add a row to a full journal fails without retries (docs/limits.md), so no loop grows it without bound.
   */
  private async enter(name: string) {
    if (this.run.stopped) {
      this.signal.throwIfAborted();
      this.run.suspend(this.run.suspension ?? {});
    }
    if (this.deadline !== undefined && this.run.clock.now() >= this.deadline) {
      throw new TaskTimeoutError(this.timeoutMs as number);
    }
    if (this.used.has(name)) throw new DuplicateStepError(name);
    this.used.add(name);
    const journal = await this.run.journal();
    const max = this.run.maxSteps;
    if (journal.kindOf(name) === undefined && journal.size >= max) {
      throw new StepResultError(name, `the task already has ${max} steps`);
    }
    return journal;
  }

  /** Whether an answer to an offer waits unconsumed (read from the store: it may have arrived during this run). */
  private async offerAnswerWaits(): Promise<boolean> {
    const journal = await this.run.journal();
    const offers = await this.run.offers();
    return Object.entries(offers).some(([key, offer]) => offer.answer !== undefined && !journal.consumed(key));
  }

  /** Parks the run, waking at the task's deadline at the latest (so a timeout ends a sleep or a question). */
  private suspend(suspension: Suspension): never {
    if (this.deadline === undefined) return this.run.suspend(suspension);
    return this.run.suspend({ ...suspension, wakeAt: Math.min(suspension.wakeAt ?? Infinity, this.deadline) });
  }

  /** A closure attempt ends at its own timeout or the task's deadline, whichever is first. */
  private closureTimeout(timeoutMs: number | undefined): number | undefined {
    if (this.deadline === undefined) return timeoutMs;
    const left = Math.max(0, this.deadline - this.run.clock.now());
    return timeoutMs === undefined ? left : Math.min(timeoutMs, left);
  }

  private checked(name: string, result: unknown): unknown {
    try {
      return journalValue(result, MAX_STEP_RESULT_BYTES).value;
    } catch (error) {
      throw new StepResultError(name, error instanceof Error ? error.message : String(error));
    }
  }
}
