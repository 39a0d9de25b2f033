import type { CallToolResult } from '@modelcontextprotocol/client';

import type { DialectName } from './DialectName.js';
import type { CancelAck, InputState, PollResult, StartResult, TaskDialect } from './dialects/TaskDialect.js';
import type { PollSchedule } from './PollSchedule.js';
import type { TaskClientError } from './TaskClientError.js';
import { TaskConnectionError, TaskNotFoundError, TaskRpcError } from './TaskClientError.js';
import { outcomeError, outcomeOf, type TaskOutcome, type TaskPayload } from './TaskOutcome.js';
import { sameVisibleState, type TaskProgress, type TaskSnapshot } from './TaskSnapshot.js';
import { isTerminalStatus } from './TaskStatus.js';
import { toTaskClientError } from './toTaskClientError.js';

/** What a handle needs from the client that made it. */
export interface HandleContext {
  dialect: TaskDialect;
  newSchedule(): PollSchedule;
  /** Consecutive failed polls tolerated before giving up (the connection may be flapping). */
  maxPollFailures: number;
  isConnected(): boolean;
  /** Awaited before the outcome is delivered, so a stored handle is gone by the time the host sees the result. */
  onSettled(handle: TaskHandle, settlement: { outcome: TaskOutcome } | { error: TaskClientError }): Promise<void>;
  onAnswered(handle: TaskHandle, key: string): void;
}

export interface HandleInit {
  toolName?: string;
  snapshot: TaskSnapshot;
  /** How the call began; absent when attaching to an existing task id. */
  started?: StartResult;
  /** Aborts a plain call. */
  abort?: AbortController;
  /** SEP-1686: the original request's wire id. */
  requestId?: string | number;
  answeredKeys?: Iterable<string>;
}

type Settled = { outcome: TaskOutcome } | { error: TaskClientError };

/** How long a pending payload request may take to answer once tasks/get says the task is terminal. */
const PAYLOAD_GRACE_MS = 3000;

/**
 * A running (or finished) tool call. For a task it polls `tasks/get` at the server's pace, answers mid-task input
 * through the host's handlers, and settles on the server's final word; for a plain call it waits for the answer.
 * Status notifications only make it poll sooner (spec R43).
 */
export class TaskHandle {
  readonly toolName: string | undefined;
  private current: TaskSnapshot;
  private readonly started: StartResult | undefined;
  private readonly abort: AbortController | undefined;
  private readonly stop = new AbortController();
  private readonly listeners = new Set<(snapshot: TaskSnapshot) => void>();
  private readonly answered: Set<string>;
  private readonly settledPromise: Promise<TaskOutcome>;
  private resolveOutcome!: (outcome: TaskOutcome) => void;
  private rejectOutcome!: (error: TaskClientError) => void;
  private settled: Settled | undefined;
  private driving = false;
  private detached = false;
  private cancelling: Promise<TaskOutcome> | undefined;
  private cancelAck: CancelAck | undefined;
  private wakeTimer: (() => void) | undefined;
  private wakePending = false;
  /** The server confirmed the task exists (immediately for every dialect but SEP-1686). */
  private confirmed: boolean;
  private cancelPending = false;
  private readonly cancelSent = new AbortController();
  private inputFailure: TaskClientError | undefined;
  requestId: string | number | undefined;

  constructor(
    private readonly context: HandleContext,
    init: HandleInit,
  ) {
    this.toolName = init.toolName;
    this.current = init.snapshot;
    this.started = init.started;
    this.abort = init.abort;
    this.requestId = init.requestId;
    this.answered = new Set(init.answeredKeys ?? []);
    this.confirmed = init.started === undefined || (init.started.kind === 'task' && init.started.created === undefined);
    if (init.started?.kind === 'task' && init.started.created !== undefined) {
      void init.started.created.then(() => {
        this.confirmed = true;
      });
    }
    this.settledPromise = new Promise<TaskOutcome>((resolve, reject) => {
      this.resolveOutcome = resolve;
      this.rejectOutcome = reject;
    });
    // Callers that only use updates() must not trigger an unhandled rejection.
    this.settledPromise.catch(() => undefined);
  }

  /** The server's task id; absent for a plain call. SEP-1686 ids are generated here and known at once. */
  get taskId(): string | undefined {
    return this.current.taskId;
  }

  get dialect(): DialectName {
    return this.current.dialect;
  }

  /** Whether the call runs as a task (false for a plain call, or a SEP-1686 call the server answered directly). */
  get isTask(): boolean {
    return this.confirmed && this.started?.kind !== 'call';
  }

  get status(): TaskSnapshot['status'] {
    return this.current.status;
  }

  get snapshot(): TaskSnapshot {
    return this.current;
  }

  /** What the server answered to this handle's cancel request, once it did (`rejected` is spec R49's -32602). */
  get cancelAcknowledgement(): CancelAck | undefined {
    return this.cancelAck;
  }

  get isSettled(): boolean {
    return this.settled !== undefined;
  }

  /**
   * Whether the server runs this call as a task: `true` once it confirmed one (at once for 2025-11-25 and the
   * extension), `false` for a plain call or when SEP-1686's original response arrived without a task.
   */
  async accepted(): Promise<boolean> {
    const started = this.started;
    if (started?.kind === 'call') return false;
    if (this.confirmed || started?.created === undefined) return true;
    return Promise.race([
      started.created.then(() => true),
      started.payload === undefined
        ? new Promise<boolean>(() => undefined)
        : started.payload.then(
            () => this.confirmed,
            () => true,
          ),
    ]);
  }

  /** Calls `listener` on every visible change (status, message, cancel requested) until the call ends. */
  onUpdate(listener: (snapshot: TaskSnapshot) => void): () => void {
    this.listeners.add(listener);
    this.ensureDriving();
    return () => this.listeners.delete(listener);
  }

  /** The current snapshot, then each change, ending after the terminal one. */
  async *updates(): AsyncGenerator<TaskSnapshot, void, undefined> {
    const queue: TaskSnapshot[] = [this.current];
    let signal: (() => void) | undefined;
    const off = this.onUpdate((snapshot) => {
      queue.push(snapshot);
      signal?.();
    });
    const ended = this.settledPromise.then(
      () => undefined,
      () => undefined,
    );
    try {
      for (;;) {
        while (queue.length > 0) {
          const snapshot = queue.shift() as TaskSnapshot;
          yield snapshot;
          if (isTerminalStatus(snapshot.status)) return;
        }
        if (this.settled !== undefined) return;
        await new Promise<void>((resolve) => {
          signal = resolve;
          void ended.then(resolve);
        });
        signal = undefined;
      }
    } finally {
      off();
    }
  }

  /** How the call ended; rejects only when the client could not find out (connection lost, task unknown). */
  outcome(): Promise<TaskOutcome> {
    this.ensureDriving();
    return this.settledPromise;
  }

  /** The tool result; rejects with `TaskFailedError` (carrying the server's error or tool result) or `TaskCancelledError`. */
  async result(): Promise<CallToolResult> {
    const outcome = await this.outcome();
    const error = outcomeError(outcome);
    if (error !== undefined) throw error;
    return (outcome as Extract<TaskOutcome, { status: 'completed' }>).result;
  }

  /**
   * Asks the server to cancel, then settles on its final word from `tasks/get` (the seed document's procedure):
   * `cancelled`, or `completed` / `failed` when the work won the race. A `-32602` for a task that was already
   * terminal is not an error here. Until that final word, snapshots carry `cancelRequested` and keep the server's status.
   */
  cancel(): Promise<TaskOutcome> {
    if (this.settled !== undefined) return this.settledPromise;
    this.cancelling ??= this.requestCancel();
    return this.cancelling;
  }

  /** Stops following the call here without cancelling it; a durable handle stays in the store for `resume()`. */
  detach(): void {
    this.detached = true;
    this.stop.abort();
    this.wake();
  }

  /** Stops following and rejects a pending outcome with `error` (the client closed); nothing is cancelled. */
  abandon(error: TaskClientError): void {
    this.detach();
    void this.settle({ error });
  }

  /** A `notifications/progress` for this call. */
  reportProgress(progress: TaskProgress): void {
    this.publish({ ...this.current, progress });
  }

  /** Poll now instead of waiting out the interval (a status notification arrived). */
  wake(): void {
    if (this.wakeTimer !== undefined) this.wakeTimer();
    else this.wakePending = true;
  }

  private async requestCancel(): Promise<TaskOutcome> {
    this.cancelPending = true;
    this.publish(this.current);
    this.ensureDriving();
    if (this.started?.kind === 'call') {
      this.abort?.abort();
      return this.outcome();
    }
    try {
      this.cancelAck = await this.context.dialect.cancel(this.current.taskId as string, this.requestId);
    } catch (error) {
      const failure = toTaskClientError(error);
      const ack = await this.laxRefusal(failure);
      if (ack === undefined) {
        this.cancelling = undefined;
        this.cancelPending = false;
        this.publish(this.current);
        throw failure;
      }
      this.cancelAck = ack;
    }
    this.cancelSent.abort();
    // The acknowledgement is not the final word: tasks/get is.
    this.wake();
    return this.outcome();
  }

  /**
   * Lenient in what it accepts: a server that refuses the cancel of a finished task with some other error than
   * spec R49's -32602 (often -32603) has still said the task is over; `tasks/get` shows whether it is, and then
   * the refusal counts as R49's. Any other failure of the cancel stays an error.
   */
  private async laxRefusal(failure: TaskClientError): Promise<CancelAck | undefined> {
    if (!(failure instanceof TaskRpcError) || failure instanceof TaskNotFoundError) return undefined;
    try {
      const poll = await this.context.dialect.get(this.current.taskId as string);
      if (!isTerminalStatus(poll.snapshot.status)) return undefined;
    } catch {
      return undefined;
    }
    return { kind: 'rejected', error: failure.error };
  }

  private ensureDriving(): void {
    if (this.driving || this.settled !== undefined || this.detached) return;
    this.driving = true;
    void this.drive();
  }

  private async drive(): Promise<void> {
    try {
      const outcome = await this.run();
      if (outcome !== undefined) await this.settle({ outcome });
    } catch (error) {
      await this.settle({ error: toTaskClientError(error) });
    }
  }

  private async run(): Promise<TaskOutcome | undefined> {
    const started = this.started;
    if (started?.kind === 'call') return this.awaitPlainCall(started.payload);
    let hint: PayloadHint | undefined = started?.payload === undefined ? undefined : this.watch(started.payload);
    if (started?.kind === 'task' && started.created !== undefined && !this.confirmed) {
      const first = await this.awaitCreation(started.created, hint);
      // The original response came first: the server answered the call itself (SEP-1686's graceful fallback).
      if (first === 'payload' && hint?.value !== undefined) return this.concludeWithoutPoll(hint.value);
    }
    const schedule = this.context.newSchedule();
    let failures = 0;
    for (;;) {
      if (this.detached) return undefined;
      let poll: PollResult;
      try {
        poll = await this.context.dialect.get(this.current.taskId as string);
        failures = 0;
      } catch (error) {
        const failure = toTaskClientError(error);
        if (failure instanceof TaskNotFoundError) {
          // spec R52: a cancelled task may be deleted at once; the acknowledgement was then the final word.
          if (this.cancelAck?.kind === 'accepted') return this.concludeCancelled();
          if (hint?.value !== undefined) return this.concludeWithoutPoll(hint.value);
          throw failure;
        }
        if (
          failure instanceof TaskConnectionError &&
          this.context.isConnected() &&
          failures < this.context.maxPollFailures
        ) {
          await this.sleep(schedule.retryDelay(failures++));
          continue;
        }
        throw failure;
      }
      this.publish(poll.snapshot);
      if (isTerminalStatus(poll.snapshot.status)) return outcomeOf(poll.snapshot, await this.finalPayload(poll, hint));
      if (poll.snapshot.status === 'input_required') hint = this.reactToInput(poll, hint);
      if (this.inputFailure !== undefined) throw this.inputFailure;
      // A payload arriving, a status notification or a cancel cut the wait short.
      await this.sleep(schedule.next(poll.snapshot.pollIntervalMs));
    }
  }

  private reactToInput(poll: PollResult, hint: PayloadHint | undefined): PayloadHint | undefined {
    const state: InputState = {
      taskId: poll.snapshot.taskId as string,
      answered: this.answered,
      onAnswered: (key) => this.context.onAnswered(this, key),
      awaitingPayload: hint !== undefined && !hint.failed && hint.value === undefined,
      signal: this.stop.signal,
    };
    const reaction = this.context.dialect.onInputRequired(poll, state);
    reaction.work?.catch((error: unknown) => {
      this.inputFailure = toTaskClientError(error);
      this.wake();
    });
    // One blocking request at a time; if its stream drops, polling carries on and a later round opens another.
    return reaction.payload === undefined ? hint : this.watch(reaction.payload);
  }

  /** The payload for a terminal status: inlined, already arrived, still arriving, or fetched now. */
  private async finalPayload(poll: PollResult, hint: PayloadHint | undefined): Promise<TaskPayload | undefined> {
    if (poll.payload !== undefined) return poll.payload;
    const { status } = poll.snapshot;
    if (status !== 'completed' && status !== 'failed') return undefined;
    if (hint !== undefined && !hint.failed) {
      // A request still carrying the payload answers promptly once the task is terminal; one whose stream silently
      // dropped never will, so it only gets a short grace before the payload is asked for again.
      const arrived = await Promise.race([
        hint.promise.catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), PAYLOAD_GRACE_MS).unref()),
      ]);
      if (arrived !== undefined) return arrived;
    }
    return this.context.dialect.payload(poll.snapshot);
  }

  private async awaitPlainCall(payload: Promise<TaskPayload>): Promise<TaskOutcome> {
    try {
      return this.concludeWithoutPoll(await payload);
    } catch (error) {
      if (this.cancelPending) {
        return this.concludeCancelled('The call was cancelled by the client');
      }
      throw error;
    }
  }

  private async awaitCreation(
    created: Promise<boolean>,
    hint: PayloadHint | undefined,
  ): Promise<'created' | 'payload'> {
    const never = new Promise<never>(() => undefined);
    const first = await Promise.race([
      created.then(() => 'created' as const),
      // The original request failing leaves only polling to tell whether the task exists.
      hint === undefined
        ? never
        : hint.promise.then(
            () => 'payload' as const,
            () => 'polling' as const,
          ),
      // A cancel before confirmation (or a detach): polling decides whether the task exists at all.
      aborted(this.cancelSent.signal).then(() => 'polling' as const),
      aborted(this.stop.signal).then(() => 'polling' as const),
    ]);
    if (first === 'payload') return 'payload';
    this.confirmed = true;
    if (first === 'created' && this.current.status === 'submitted')
      this.publish({ ...this.current, status: 'working' });
    return 'created';
  }

  private concludeWithoutPoll(payload: TaskPayload): TaskOutcome {
    const failed = payload.kind === 'error' || payload.result.isError === true;
    const { cancelRequested: _local, ...server } = this.current;
    return outcomeOf({ ...server, status: failed ? 'failed' : 'completed' }, payload);
  }

  private concludeCancelled(message?: string): TaskOutcome {
    const ackSnapshot = this.cancelAck?.kind === 'accepted' ? this.cancelAck.snapshot : undefined;
    const snapshot: TaskSnapshot = {
      ...this.current,
      ...ackSnapshot,
      status: 'cancelled',
      ...(message !== undefined && ackSnapshot?.statusMessage === undefined && { statusMessage: message }),
    };
    delete snapshot.cancelRequested;
    return outcomeOf(snapshot, undefined);
  }

  private publish(snapshot: TaskSnapshot): void {
    if (this.settled !== undefined) return;
    // Once terminal, a task never changes again (spec R17): nothing may follow the final word.
    if (isTerminalStatus(this.current.status) && !isTerminalStatus(snapshot.status)) return;
    const { cancelRequested: _local, ...server } = snapshot;
    const terminal = isTerminalStatus(snapshot.status);
    const progress = server.progress ?? (terminal ? undefined : this.current.progress);
    const next: TaskSnapshot = {
      ...server,
      ...(progress !== undefined && { progress }),
      ...(this.cancelPending && !terminal && { cancelRequested: true }),
    };
    const visible = !sameVisibleState(this.current, next);
    this.current = next;
    if (!visible) return;
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch {
        // A listener's failure must not stop the task being followed.
      }
    }
  }

  private async settle(settlement: Settled): Promise<void> {
    if (this.settled !== undefined) return;
    if ('outcome' in settlement) this.publish(settlement.outcome.snapshot);
    this.settled = settlement;
    this.stop.abort();
    await this.context.onSettled(this, settlement).catch(() => undefined);
    if ('outcome' in settlement) this.resolveOutcome(settlement.outcome);
    else this.rejectOutcome(settlement.error);
  }

  private watch(promise: Promise<TaskPayload>): PayloadHint {
    const hint: PayloadHint = { promise, failed: false };
    promise.then(
      (value) => {
        hint.value = value;
        this.wake();
      },
      () => {
        hint.failed = true;
      },
    );
    return hint;
  }

  private sleep(ms: number): Promise<void> {
    if (this.wakePending) {
      this.wakePending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wakeTimer = () => {
        this.wakeTimer = undefined;
        done();
      };
    }).finally(() => {
      this.wakeTimer = undefined;
    });
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** A payload that may arrive without polling: SEP-1686's original response, or 2025-11-25's blocking tasks/result. */
interface PayloadHint {
  promise: Promise<TaskPayload>;
  value?: TaskPayload;
  failed: boolean;
}
