import type { CallToolResult } from '@modelcontextprotocol/client';

import type { EventSource } from '../protocol/index.js';
import type { DialectName } from './DialectName.js';
import type { FollowOptions, TaskEvent } from './EventSourceFollower.js';
import type { CancelAck, InputState, PollResult, StartResult, TaskDialect } from './dialects/TaskDialect.js';
import { answeredOutcome, cancelledOutcome, plainCallOutcome } from './handleConclusions.js';
import type { HandleInit } from './HandleInit.js';
import { nextPhase, type CancelPhase, type HandleEvent, type HandlePhase } from './HandlePhase.js';
import { laxCancelRefusal } from './laxCancelRefusal.js';
import { followLive } from './followLive.js';
import { finalPayload, isAwaiting, watchPayload, type PayloadHint } from './PayloadHint.js';
import type { PollSchedule } from './PollSchedule.js';
import { SnapshotFeed } from './SnapshotFeed.js';
import type { TaskClientError } from './TaskClientError.js';
import { TaskConnectionError, TaskNotFoundError } from './TaskClientError.js';
import { outcomeError, outcomeOf, type TaskOutcome } from './TaskOutcome.js';
import type { TaskProgress, TaskSnapshot } from './TaskSnapshot.js';
import { isTerminalStatus } from './TaskStatus.js';
import { toTaskClientError } from './toTaskClientError.js';
import { Waker } from './Waker.js';
import { whenAborted } from './whenAborted.js';

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

type Settled = { outcome: TaskOutcome } | { error: TaskClientError };

let openHandle: (context: HandleContext, init: HandleInit) => TaskHandle;

/** A new handle for `context`'s client: the one way to make a TaskHandle (its constructor is private). */
export function openTaskHandle(context: HandleContext, init: HandleInit): TaskHandle {
  return openHandle(context, init);
}

/**
 * A running (or finished) tool call. For a task it polls `tasks/get` at the server's pace, answers mid-task input
 * through the host's handlers, and settles on the server's final word; for a plain call it waits for the answer.
 * Status notifications only make it poll sooner (spec R43). Its life is a `HandlePhase`.
 */
export class TaskHandle {
  readonly toolName: string | undefined;
  requestId: string | number | undefined;
  private phaseNow: HandlePhase = 'idle';
  private cancelPhase: CancelPhase = 'none';
  private readonly feed: SnapshotFeed;
  private readonly started: StartResult | undefined;
  private readonly keptSource: EventSource | undefined;
  private readonly abort: AbortController | undefined;
  /** Aborted when the handle stops following (settled or detached): input handlers stop with it. */
  private readonly stop = new AbortController();
  /** Aborted once the server took the cancel: a SEP-1686 handle still awaiting creation then polls to find out. */
  private readonly cancelSent = new AbortController();
  private readonly waker = new Waker();
  private readonly answered: Set<string>;
  private readonly settledPromise: Promise<TaskOutcome>;
  private resolveOutcome!: (outcome: TaskOutcome) => void;
  private rejectOutcome!: (error: TaskClientError) => void;
  private cancelling: Promise<TaskOutcome> | undefined;
  private cancelAck: CancelAck | undefined;
  private inputFailure: TaskClientError | undefined;
  /** The server confirmed a task exists: at once for every dialect but SEP-1686, never for a plain call. */
  private confirmed: boolean;

  static {
    // Handles are made by the client that follows them (HandleRegistry), through openTaskHandle; not by `new`.
    openHandle = (context, init) => new TaskHandle(context, init);
  }

  private constructor(
    private readonly context: HandleContext,
    init: HandleInit,
  ) {
    this.toolName = init.toolName;
    this.feed = new SnapshotFeed(init.snapshot);
    this.started = init.started;
    this.keptSource = init.eventSource;
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
    return this.feed.snapshot.taskId;
  }

  get dialect(): DialectName {
    return this.feed.snapshot.dialect;
  }

  /** Whether the call runs as a task (false for a plain call, or a SEP-1686 call the server answered directly). */
  get isTask(): boolean {
    return this.confirmed && this.started?.kind !== 'call';
  }

  get status(): TaskSnapshot['status'] {
    return this.feed.snapshot.status;
  }

  get snapshot(): TaskSnapshot {
    return this.feed.snapshot;
  }

  /** Where the task publishes intermediate results: on the 2026 extension, when the server declared Events. */
  get eventSource(): EventSource | undefined {
    return this.started?.kind === 'task' ? this.started.eventSource : this.keptSource;
  }

  /**
   * The task's intermediate results as they come (`for await (const event of handle.events())`): push on an
   * `events/stream`, else polls, from the source's start or `options.cursor`; status is still followed (spec TS15).
   * Once the task ends, what it emitted before its end is still yielded in order, then following stops (TS17-TS19; a
   * source silent for 2 s meanwhile ends it). Without a source it ends at once; a refused subscription ends it without
   * failing the task (TS16); on a handle already terminal it replays the task's log.
   */
  async *events(options: Omit<FollowOptions, 'ending'> = {}): AsyncGenerator<TaskEvent, void, undefined> {
    const source = this.eventSource;
    const dialect = this.context.dialect;
    if (!source || !dialect.events) return;
    const live = {
      status: this.status,
      settled: this.phaseNow === 'settled',
      subscribe: (listener: (snapshot: TaskSnapshot) => void) => this.feed.subscribe(listener),
      settlement: this.settledPromise,
    };
    const follow = dialect.events.bind(dialect);
    yield* followLive(live, (stops) => follow(source, { ...options, ...stops }), options.signal);
  }

  /** Where the handle is in its life (see `HandlePhase`). */
  get phase(): HandlePhase {
    return this.phaseNow;
  }

  /** What the server answered to this handle's cancel request, once it did (`rejected` is spec R49's -32602). */
  get cancelAcknowledgement(): CancelAck | undefined {
    return this.cancelAck;
  }

  get isSettled(): boolean {
    return this.phaseNow === 'settled';
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
    const off = this.feed.subscribe(listener);
    this.follow();
    return off;
  }

  /** The current snapshot, then each change, ending after the terminal one. */
  async *updates(): AsyncGenerator<TaskSnapshot, void, undefined> {
    const feed = this.feed.updates(this.settledPromise, () => this.phaseNow === 'settled');
    this.follow();
    yield* feed;
  }

  /** How the call ended; rejects only when the client could not find out (connection lost, task unknown). */
  outcome(): Promise<TaskOutcome> {
    this.follow();
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
    if (this.phaseNow === 'settled') return this.settledPromise;
    this.cancelling ??= this.requestCancel();
    return this.cancelling;
  }

  /** Stops following the call here without cancelling it; a durable handle stays in the store for `resume()`. */
  detach(): void {
    if (this.phaseNow === 'settled') return;
    this.move({ type: 'detach' });
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
    this.publish({ ...this.feed.snapshot, progress });
  }

  /** Poll now instead of waiting out the interval (a status notification arrived). */
  wake(): void {
    this.waker.wake();
  }

  private move(event: HandleEvent): void {
    this.phaseNow = nextPhase(this.phaseNow, event);
  }

  /** Starts following the call, once: a plain call awaits its response, a task is polled. */
  private follow(): void {
    if (this.phaseNow !== 'idle') return;
    const started = this.started;
    const unconfirmed = started?.kind === 'task' && started.created !== undefined && !this.confirmed;
    this.move({ type: 'follow', kind: started?.kind === 'call' ? 'call' : unconfirmed ? 'unconfirmed' : 'task' });
    void this.drive();
  }

  private async requestCancel(): Promise<TaskOutcome> {
    this.cancelPhase = 'requested';
    this.publish(this.feed.snapshot);
    this.follow();
    if (this.started?.kind === 'call') {
      this.abort?.abort();
      return this.outcome();
    }
    try {
      this.cancelAck = await this.context.dialect.cancel(this.taskId as string, this.requestId);
    } catch (error) {
      const failure = toTaskClientError(error);
      const ack = await laxCancelRefusal(this.context.dialect, this.taskId as string, failure);
      if (ack === undefined) {
        this.cancelling = undefined;
        this.cancelPhase = 'none';
        this.publish(this.feed.snapshot);
        throw failure;
      }
      this.cancelAck = ack;
    }
    this.cancelPhase = 'sent';
    this.cancelSent.abort();
    // The acknowledgement is not the final word: tasks/get is.
    this.wake();
    return this.outcome();
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
    if (started?.kind === 'call') return plainCallOutcome(this, started.payload, () => this.cancelPhase !== 'none');
    let hint = started?.payload === undefined ? undefined : watchPayload(started.payload, () => this.wake());
    if (this.phaseNow === 'confirming' && started?.kind === 'task' && started.created !== undefined) {
      const first = await this.awaitCreation(started.created, hint);
      // The original response came first: the server answered the call itself (SEP-1686's graceful fallback).
      if (first === 'payload' && hint?.value !== undefined) return answeredOutcome(this.feed.snapshot, hint.value);
    }
    const schedule = this.context.newSchedule();
    let failures = 0;
    for (;;) {
      if (this.phaseNow === 'detached') return undefined;
      let poll: PollResult;
      try {
        poll = await this.context.dialect.get(this.taskId as string);
        failures = 0;
      } catch (error) {
        const failure = toTaskClientError(error);
        if (failure instanceof TaskNotFoundError) {
          // spec R52: a cancelled task may be deleted at once; the acknowledgement was then the final word.
          if (this.cancelAck?.kind === 'accepted') return cancelledOutcome(this.feed.snapshot, this.cancelAck);
          if (hint?.value !== undefined) return answeredOutcome(this.feed.snapshot, hint.value);
          throw failure;
        }
        if (
          failure instanceof TaskConnectionError &&
          this.context.isConnected() &&
          failures < this.context.maxPollFailures
        ) {
          await this.waker.sleep(schedule.retryDelay(failures++));
          continue;
        }
        throw failure;
      }
      this.publish(poll.snapshot);
      if (isTerminalStatus(poll.snapshot.status))
        return outcomeOf(poll.snapshot, await finalPayload(poll, hint, this.context.dialect));
      if (poll.snapshot.status === 'input_required') hint = this.reactToInput(poll, hint);
      if (this.inputFailure !== undefined) throw this.inputFailure;
      // A payload arriving, a status notification or a cancel cut the wait short.
      await this.waker.sleep(schedule.next(poll.snapshot.pollIntervalMs));
    }
  }

  private reactToInput(poll: PollResult, hint: PayloadHint | undefined): PayloadHint | undefined {
    const state: InputState = {
      taskId: poll.snapshot.taskId as string,
      answered: this.answered,
      onAnswered: (key) => this.context.onAnswered(this, key),
      awaitingPayload: isAwaiting(hint),
      signal: this.stop.signal,
    };
    const reaction = this.context.dialect.onInputRequired(poll, state);
    reaction.work?.catch((error: unknown) => {
      this.inputFailure = toTaskClientError(error);
      this.wake();
    });
    // One blocking request at a time; if its stream drops, polling carries on and a later round opens another.
    return reaction.payload === undefined ? hint : watchPayload(reaction.payload, () => this.wake());
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
      whenAborted(this.cancelSent.signal).then(() => 'polling' as const),
      whenAborted(this.stop.signal).then(() => 'polling' as const),
    ]);
    if (first === 'payload') return 'payload';
    this.confirmed = true;
    this.move({ type: 'confirmed' });
    if (first === 'created' && this.status === 'submitted') this.publish({ ...this.feed.snapshot, status: 'working' });
    return 'created';
  }

  private publish(snapshot: TaskSnapshot): void {
    if (this.phaseNow === 'settled') return;
    this.feed.publish(snapshot, this.cancelPhase !== 'none');
  }

  private async settle(settlement: Settled): Promise<void> {
    if (this.phaseNow === 'settled') return;
    if ('outcome' in settlement) this.publish(settlement.outcome.snapshot);
    this.move({ type: 'settle' });
    this.stop.abort();
    await this.context.onSettled(this, settlement).catch(() => undefined);
    if ('outcome' in settlement) this.resolveOutcome(settlement.outcome);
    else this.rejectOutcome(settlement.error);
  }
}
