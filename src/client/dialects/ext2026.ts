import type { CallToolResult } from '@modelcontextprotocol/client';

import {
  ErrorCodes,
  DetailedTaskSchema,
  EXT_GENERATION,
  ExtMethod,
  EventSourceSchema,
  ExtTaskSchema,
  InputRequestsSchema,
  ResultType,
  TASKS_EXTENSION,
  type EventSource,
  type ExtTask,
} from '../../protocol/index.js';
import { followEventSource, type FollowContext, type FollowOptions, type TaskEvent } from '../EventSourceFollower.js';
import type { InputRouter } from '../InputRouter.js';
import type { RawChannel, RawReply } from '../RawChannel.js';
import {
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskRpcError,
  type RpcErrorObject,
} from '../TaskClientError.js';
import type { TaskPayload } from '../TaskOutcome.js';
import { progressOfWire, type TaskSnapshot } from '../TaskSnapshot.js';
import type {
  CallMode,
  CancelAck,
  InputReaction,
  InputState,
  PollResult,
  StartRequest,
  StartResult,
  TaskDialect,
} from './TaskDialect.js';

/** Rounds of synchronous input (MRTR) a single tools/call may take before the client gives up. */
const MAX_INPUT_ROUNDS = 10;

/** `-32021` MISSING_REQUIRED_CLIENT_CAPABILITY, and `-32003` from early drafts of the extension (spec A11). */
const MISSING_CAPABILITY_CODES = new Set<number>([
  ErrorCodes.MISSING_REQUIRED_CLIENT_CAPABILITY,
  ErrorCodes.DRAFT_MISSING_CAPABILITY,
]);

export interface Ext2026Context {
  raw: RawChannel;
  /** The per-request `_meta` envelope of the 2026-07-28 wire, with or without the extension declared. */
  envelope(declareTasks: boolean): Record<string, unknown>;
  /** Whether `server/discover` listed the extension. */
  advertised: boolean;
  inputs: InputRouter;
  requestTimeoutMs: number;
  /** Streamable HTTP cancels a request by closing its stream on this wire. */
  cancelByStream: boolean;
  /** Whether `server/discover` declared the Events extension. */
  eventsOffered(): boolean;
}

type RoundTrip =
  { kind: 'task'; snapshot: TaskSnapshot; eventSource?: EventSource } | { kind: 'payload'; payload: TaskPayload };

export function snapshotFromExtTask(task: ExtTask): TaskSnapshot {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    ...(task.pollIntervalMs !== undefined && { pollIntervalMs: task.pollIntervalMs }),
    ...progressOfWire(task),
    dialect: EXT_GENERATION,
  };
}

function withoutResultType(result: Record<string, unknown>): Record<string, unknown> {
  const { resultType: _resultType, ...rest } = result;
  return rest;
}

/**
 * The `io.modelcontextprotocol/tasks` extension on the 2026-07-28 wire (spec §3). Requests go through the raw
 * channel because a `tools/call` answered with `resultType: "task"` is not a result the SDK client accepts; the
 * transport still derives `Mcp-Method` and `Mcp-Name: <taskId>` from the envelope and body (spec E17).
 */
export class Ext2026Dialect implements TaskDialect {
  readonly era = 'modern';

  constructor(private readonly context: Ext2026Context) {}

  get name(): typeof EXT_GENERATION | 'none' {
    return this.context.advertised ? EXT_GENERATION : 'none';
  }

  async plan(_tool: string, mode: CallMode): Promise<boolean> {
    if (mode === 'plain') return false;
    if (!this.context.advertised && mode === 'task') {
      throw new TaskNotSupportedError(
        TASKS_EXTENSION,
        `The server does not advertise the ${TASKS_EXTENSION} extension`,
      );
    }
    // The server alone decides whether a declaring request becomes a task (spec §3.2).
    return this.context.advertised;
  }

  async start(request: StartRequest): Promise<StartResult> {
    const params = { name: request.name, arguments: request.arguments, ...(request.meta && { _meta: request.meta }) };
    if (!request.asTask) {
      return {
        kind: 'call',
        payload: this.roundTrips(params, false, request.signal).then((trip) => this.callPayload(trip)),
      };
    }
    const trip = await this.roundTrips(params, true, request.signal);
    return trip.kind === 'task'
      ? { kind: 'task', snapshot: trip.snapshot, ...(trip.eventSource && { eventSource: trip.eventSource }) }
      : { kind: 'call', payload: Promise.resolve(trip.payload) };
  }

  /** Follows a task's event source (push, else poll), from `options.cursor` or its initialCursor. */
  events(source: EventSource, options: FollowOptions = {}): AsyncGenerator<TaskEvent, void, undefined> {
    return followEventSource(this.eventsContext(), source, options);
  }

  eventsContext(): FollowContext {
    return {
      raw: this.context.raw,
      envelope: () => this.context.envelope(true),
      cancelByStream: this.context.cancelByStream,
    };
  }

  async get(taskId: string): Promise<PollResult> {
    const reply = await this.send(ExtMethod.get, { taskId });
    if (!reply.ok) throw this.taskError(reply.error, taskId);
    // spec A13: a `resultType` of "task" on tasks/get contradicts the normative "complete"; accept both.
    const parsed = DetailedTaskSchema.safeParse(reply.result);
    if (!parsed.success) throw new TaskProtocolError(`Invalid tasks/get result: ${parsed.error.message}`);
    const task = parsed.data;
    const poll: PollResult = { snapshot: snapshotFromExtTask(task) };
    if (task.status === 'completed' && task.result !== undefined) {
      poll.payload = { kind: 'result', result: withoutResultType(task.result) as CallToolResult };
    }
    // spec E15: failed carries the JSON-RPC error of the underlying request.
    if (task.status === 'failed' && task.error !== undefined) poll.payload = { kind: 'error', error: task.error };
    if (task.status === 'input_required') {
      poll.inputRequests = Object.fromEntries(
        Object.entries(task.inputRequests ?? {}).map(([key, entry]) => [
          key,
          { method: entry.method, params: entry.params ?? {} },
        ]),
      );
    }
    return poll;
  }

  async payload(snapshot: TaskSnapshot): Promise<TaskPayload | undefined> {
    // Results are inlined in tasks/get (spec §3.4); there is no tasks/result on this wire.
    return (await this.get(snapshot.taskId as string)).payload;
  }

  onInputRequired(poll: PollResult, state: InputState): InputReaction {
    // spec E10 E11: keys are unique for the task's life; each is answered once, however many polls list it.
    const pending = Object.entries(poll.inputRequests ?? {}).filter(([key]) => !state.answered.has(key));
    if (pending.length === 0) return {};
    for (const [key] of pending) state.answered.add(key);
    const work = (async () => {
      for (const [key, request] of pending) {
        const response = await this.context.inputs.answer(request.method, request.params, {
          taskId: state.taskId,
          dialect: EXT_GENERATION,
          key,
          signal: state.signal,
        });
        if (state.signal.aborted) return;
        // spec E12: acknowledged with an empty result; partial sets are allowed.
        const reply = await this.send(ExtMethod.update, { taskId: state.taskId, inputResponses: { [key]: response } });
        if (!reply.ok && !state.signal.aborted) throw this.taskError(reply.error, state.taskId);
        state.onAnswered(key);
      }
    })();
    return { work };
  }

  async cancel(taskId: string): Promise<CancelAck> {
    // spec E13: an empty acknowledgement; the task may take a while to reach cancelled, or never do.
    const reply = await this.send(ExtMethod.cancel, { taskId });
    if (reply.ok) return { kind: 'accepted' };
    if (reply.error.code === ErrorCodes.INVALID_PARAMS) return { kind: 'rejected', error: reply.error };
    throw this.taskError(reply.error, taskId);
  }

  notificationTaskId(method: string, params: Record<string, unknown> | undefined): string | undefined {
    if (method !== ExtMethod.status) return undefined;
    const taskId = params?.['taskId'];
    return typeof taskId === 'string' ? taskId : undefined;
  }

  /** One `tools/call`, carrying synchronous input rounds (MRTR) until the server answers or makes a task. */
  private async roundTrips(params: Record<string, unknown>, declare: boolean, signal: AbortSignal): Promise<RoundTrip> {
    let current: Record<string, unknown> = params;
    for (let round = 0; round <= MAX_INPUT_ROUNDS; round++) {
      const reply = await this.context.raw.request(
        'tools/call',
        {
          ...current,
          _meta: { ...(current['_meta'] as Record<string, unknown> | undefined), ...this.context.envelope(declare) },
        },
        { signal, cancelByStream: this.context.cancelByStream },
      ).reply;
      if (!reply.ok) {
        if (MISSING_CAPABILITY_CODES.has(reply.error.code) && !declare) {
          throw new TaskNotSupportedError(
            TASKS_EXTENSION,
            `The server can only run this tool as a task: ${reply.error.message}`,
          );
        }
        return { kind: 'payload', payload: { kind: 'error', error: reply.error } };
      }
      const result = reply.result;
      const resultType = result['resultType'];
      if (resultType === ResultType.task) {
        // spec E1 E2: a task for a request that did not declare the extension is an invalid response.
        if (!declare)
          throw new TaskProtocolError('The server created a task for a request that did not declare the extension');
        const parsed = ExtTaskSchema.safeParse(result);
        if (!parsed.success) throw new TaskProtocolError(`Invalid CreateTaskResult: ${parsed.error.message}`);
        // Task Event Sources: followed only where the server declared Events (spec V6); a malformed one is ignored.
        const source = EventSourceSchema.safeParse(result['eventSource']);
        return {
          kind: 'task',
          snapshot: snapshotFromExtTask(parsed.data),
          ...(source.success && this.context.eventsOffered() && { eventSource: source.data }),
        };
      }
      if (resultType === ResultType.inputRequired) {
        current = await this.answerRound(params, result);
        continue;
      }
      if (resultType !== undefined && resultType !== ResultType.complete) {
        throw new TaskProtocolError(`Unsupported resultType ${JSON.stringify(resultType)} for tools/call`);
      }
      return { kind: 'payload', payload: { kind: 'result', result: withoutResultType(result) as CallToolResult } };
    }
    throw new TaskProtocolError(`tools/call still needed input after ${MAX_INPUT_ROUNDS} rounds`);
  }

  /** The retry of an `input_required` answer: original params, the responses, and `requestState` echoed byte for byte. */
  private async answerRound(
    params: Record<string, unknown>,
    result: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const requests = InputRequestsSchema.safeParse(result['inputRequests'] ?? {});
    if (!requests.success) throw new TaskProtocolError(`Invalid inputRequests: ${requests.error.message}`);
    const inputResponses: Record<string, unknown> = {};
    for (const [key, request] of Object.entries(requests.data)) {
      inputResponses[key] = await this.context.inputs.answer(request.method, request.params ?? {}, {
        dialect: this.name,
        key,
      });
    }
    const requestState = result['requestState'];
    return {
      ...params,
      ...(Object.keys(inputResponses).length > 0 && { inputResponses }),
      ...(typeof requestState === 'string' && { requestState }),
    };
  }

  private callPayload(trip: RoundTrip): TaskPayload {
    if (trip.kind === 'task') throw new TaskProtocolError('The server created a task for a plain call');
    return trip.payload;
  }

  private send(method: string, params: Record<string, unknown>): Promise<RawReply> {
    return this.context.raw.request(
      method,
      { ...params, _meta: this.context.envelope(true) },
      { timeoutMs: this.context.requestTimeoutMs, cancelByStream: this.context.cancelByStream },
    ).reply;
  }

  private taskError(error: RpcErrorObject, taskId: string): Error {
    // spec E14
    if (error.code === ErrorCodes.INVALID_PARAMS) return new TaskNotFoundError(taskId, error);
    if (MISSING_CAPABILITY_CODES.has(error.code)) {
      return new TaskNotSupportedError(TASKS_EXTENSION, `The server refused the task request: ${error.message}`);
    }
    return new TaskRpcError(error);
  }
}
