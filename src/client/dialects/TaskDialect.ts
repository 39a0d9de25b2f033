import type { EventSource } from '../../protocol/index.js';
import type { DialectName } from '../DialectName.js';
import type { FollowContext, FollowOptions, TaskEvent } from '../EventSourceFollower.js';
import type { RpcErrorObject } from '../TaskClientError.js';
import type { TaskPayload } from '../TaskOutcome.js';
import type { TaskSnapshot } from '../TaskSnapshot.js';

/** How the host wants a tool run: as a task where allowed (`auto`), always as a task, or never. */
export type CallMode = 'auto' | 'task' | 'plain';

export interface StartRequest {
  name: string;
  arguments: Record<string, unknown>;
  /** Decided by `plan()`. */
  asTask: boolean;
  /** Requested retention: `task.ttl` (2025-11-25) or `keepAlive` (SEP-1686); the extension cannot request one. */
  ttlMs?: number;
  /** Aborts a plain call (the handle's `cancel()` for calls that are not tasks). */
  signal: AbortSignal;
  /** Sent as `_meta.progressToken` where the dialect keeps progress alive for the task (not the extension, spec E16). */
  progressToken?: string;
  /** More `params._meta` of the call (e.g. W3C `traceparent`); the dialect's own keys win. */
  meta?: Record<string, unknown>;
}

/** The server made (or, for SEP-1686, was asked to make) a task. */
export interface StartedTask {
  kind: 'task';
  snapshot: TaskSnapshot;
  /** SEP-1686: the wire id of the original request; cancelling that id cancels the task. */
  requestId?: string | number;
  /** SEP-1686: `true` once `notifications/tasks/created` arrived. Never settles if the original response wins. */
  created?: Promise<boolean>;
  /** SEP-1686: the original response, which still arrives when the work ends. */
  payload?: Promise<TaskPayload>;
  /** The extension with Events: where the task's intermediate results are published (Task Event Sources). */
  eventSource?: EventSource;
}

/** The request runs, or ran, as a plain call: its answer is the payload. */
export interface StartedCall {
  kind: 'call';
  payload: Promise<TaskPayload>;
}

export type StartResult = StartedTask | StartedCall;

/** One `tasks/get`, normalised. */
export interface PollResult {
  snapshot: TaskSnapshot;
  /** Inlined by the extension on terminal tasks (`result` / `error`). */
  payload?: TaskPayload;
  /** The extension's outstanding input requests, keyed as the server keyed them. */
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
}

/** What `tasks/cancel` (or the dialect's way of cancelling) said. */
export type CancelAck =
  /** The receiver took the request; the final status still comes from `tasks/get`. */
  | { kind: 'accepted'; snapshot?: TaskSnapshot }
  /** `-32602`: already terminal (spec R49) or unknown; the caller settles through `tasks/get`. */
  | { kind: 'rejected'; error: RpcErrorObject };

/** Per-handle memory the dialect may use while answering input. */
export interface InputState {
  taskId: string;
  /** Extension `inputRequests` keys already answered; each key is answered once (spec E10, E11). */
  answered: Set<string>;
  /** Called after a key was answered, so durable handles can remember it. */
  onAnswered(key: string): void;
  /** A request that will carry the payload (a blocking tasks/result) is already open; do not open another. */
  awaitingPayload: boolean;
  signal: AbortSignal;
}

/** What a dialect started in reaction to `input_required`; the handle keeps polling meanwhile (spec R19). */
export interface InputReaction {
  /** 2025-11-25: the blocking `tasks/result` that carries the server's requests and, in the end, the payload. */
  payload?: Promise<TaskPayload>;
  /** Extension: answering `inputRequests` and sending `tasks/update`. */
  work?: Promise<void>;
}

export interface TaskPage {
  tasks: TaskSnapshot[];
  nextCursor?: string;
}

/** One wire generation of tasks, behind the handle interface every dialect shares. */
export interface TaskDialect {
  /** The generation in use; `none` when the server offers no tasks. */
  readonly name: DialectName;
  readonly era: 'legacy' | 'modern';
  /** Whether to run a tool as a task; throws `TaskNotSupportedError` when the mode is not allowed. */
  plan(tool: string, mode: CallMode): Promise<boolean>;
  start(request: StartRequest): Promise<StartResult>;
  get(taskId: string): Promise<PollResult>;
  /** The payload of a terminal task, or `undefined` when the dialect defines none for its status. */
  payload(snapshot: TaskSnapshot): Promise<TaskPayload | undefined>;
  onInputRequired(poll: PollResult, state: InputState): InputReaction;
  cancel(taskId: string, requestId?: string | number): Promise<CancelAck>;
  /** Absent when the dialect has no server-side listing. */
  list?(cursor?: string): Promise<TaskPage>;
  /** SEP-1686 only. */
  delete?(taskId: string): Promise<void>;
  /** The extension with Events only: follows a task's event source. */
  events?(source: EventSource, options?: FollowOptions): AsyncGenerator<TaskEvent, void, undefined>;
  /** The extension with Events only: what the Events requests of any type are sent with. */
  eventsContext?(): FollowContext;
  /** The task a notification is about, if it is a status notification of this dialect. */
  notificationTaskId(method: string, params: Record<string, unknown> | undefined): string | undefined;
}
