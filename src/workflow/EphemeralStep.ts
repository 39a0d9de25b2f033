import { parseDuration } from './parseDuration.js';
import type { ElicitOutcome, InputCheck, InputRequest, Step, StepConfig } from './Step.js';
import { DuplicateStepError, UnknownOfferError, assertOfferKey, isNonRetryable } from './StepErrors.js';
import {
  DEFAULT_RETRIES,
  backoffDelay,
  journalValue,
  runStepClosure,
  stepArgs,
  type StepClosure,
} from './runStepClosure.js';

/** Asks the requestor directly, for a plain call (the SDK's `ctx.mcpReq.elicitInput`). */
export type DirectElicit = (params: Record<string, unknown>, timeoutMs?: number) => Promise<Record<string, unknown>>;

/**
 * The step API of a plain (non-task) call: the same semantics within one request and without a journal — retries and
 * sleeps wait in memory, questions go straight to the requestor, nothing survives the process.
 */
export class EphemeralStep implements Step {
  readonly taskId = undefined;
  private readonly used = new Set<string>();
  private readonly offered = new Set<string>();

  constructor(
    readonly signal: AbortSignal,
    private readonly ask: DirectElicit | undefined,
  ) {}

  idempotencyKey(name: string): string {
    return name;
  }

  async do<T>(name: string, configOrFn: StepConfig | StepClosure<T>, maybeFn?: StepClosure<T>): Promise<T> {
    const { config, fn } = stepArgs(configOrFn, maybeFn);
    this.enter(name);
    const policy = { ...DEFAULT_RETRIES, ...config.retries };
    for (let attempt = 1; ; attempt++) {
      try {
        return journalValue(await runStepClosure(name, fn, attempt, this.signal, config.timeoutMs)).value as T;
      } catch (error) {
        if (this.signal.aborted || isNonRetryable(error) || attempt > policy.limit) throw error;
        await this.wait(backoffDelay(attempt, policy));
      }
    }
  }

  async sleep(name: string, duration: number | string): Promise<void> {
    this.enter(name);
    await this.wait(parseDuration(duration));
  }

  async sleepUntil(name: string, when: Date | number): Promise<void> {
    this.enter(name);
    await this.wait((typeof when === 'number' ? when : when.getTime()) - Date.now());
  }

  async elicit(name: string, request: InputRequest, options: { timeoutMs?: number } = {}): Promise<ElicitOutcome> {
    this.enter(name);
    if (!this.ask) throw new Error(`step.elicit("${name}"): this call cannot ask its requestor`);
    try {
      return await this.ask(request.params ?? {}, options.timeoutMs);
    } catch (error) {
      if (options.timeoutMs !== undefined && !this.signal.aborted && /time(d)? ?out/i.test(String(error))) {
        return { outcome: 'timed_out' };
      }
      throw error;
    }
  }

  /** A plain call has no task to answer: the offer is registered (keys stay unique) but never answered. */
  async offer(key: string, _request: InputRequest): Promise<void> {
    assertOfferKey(key);
    this.enter(key);
    this.offered.add(key);
  }

  async checkInput(name: string, key: string): Promise<InputCheck> {
    this.enter(name);
    if (!this.offered.has(key)) throw new UnknownOfferError(name, key);
    return { state: 'unanswered' };
  }

  async emit(name: string): Promise<void> {
    // A plain call has no task and so no event log; the name is still taken, as a task run would take it.
    this.enter(name);
  }

  async status(): Promise<void> {
    // A plain call has no task whose status a poller could read.
  }

  private enter(name: string): void {
    this.signal.throwIfAborted();
    if (this.used.has(name)) throw new DuplicateStepError(name);
    this.used.add(name);
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.signal.aborted) return reject(this.signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(this.signal.reason);
      };
      const timer = setTimeout(
        () => {
          this.signal.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
