import { randomUUID } from 'node:crypto';

import { ProtocolError, type CallToolResult, type Client } from '@modelcontextprotocol/client';
import * as z from 'zod';

import {
  ErrorCodes,
  relatedTaskId,
  SEP_GENERATION,
  SEP_RELATED_TASK_META,
  SEP_TASK_META,
  SepMethod,
  SepTaskListSchema,
  SepTaskSchema,
  type SepTask,
} from '../../protocol/index.js';
import { MAX_TIMER_MS, type RawChannel, type RawReply } from '../RawChannel.js';
import {
  TaskConnectionError,
  TaskNotFoundError,
  TaskNotSupportedError,
  TaskProtocolError,
  TaskRpcError,
} from '../TaskClientError.js';
import type { TaskPayload } from '../TaskOutcome.js';
import { progressOfWire, type TaskSnapshot } from '../TaskSnapshot.js';
import { rpcErrorOf, toTaskClientError } from '../toTaskClientError.js';
import type {
  CallMode,
  CancelAck,
  InputReaction,
  PollResult,
  StartRequest,
  StartResult,
  TaskDialect,
  TaskPage,
} from './TaskDialect.js';

const AnyResult = z.looseObject({});

/** Re-sends of the original request after the connection dropped, per the proposal's idempotent retry. */
const MAX_RESENDS = 2;

export function snapshotFromSepTask(task: SepTask): TaskSnapshot {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.error !== undefined && { statusMessage: task.error }),
    ...(task.keepAlive !== undefined && { ttlMs: task.keepAlive }),
    ...(task.pollFrequency !== undefined && { pollIntervalMs: task.pollFrequency }),
    ...progressOfWire(task),
    dialect: SEP_GENERATION,
  };
}

export interface Sep1686Context {
  client: Client;
  raw: RawChannel;
  requestTimeoutMs: number;
}

/**
 * The SEP-1686 proposal (seed 1): the client names the task, the original request still gets its normal response,
 * and `notifications/tasks/created` races it. Cancelling means cancelling the original request id.
 */
export class Sep1686Dialect implements TaskDialect {
  readonly name = SEP_GENERATION;
  readonly era = 'legacy';
  /** The live wire id of each task's original request (it changes when the request is re-sent). */
  private readonly requestIds = new Map<string, string>();

  constructor(private readonly context: Sep1686Context) {}

  async plan(_tool: string, mode: CallMode): Promise<boolean> {
    // No negotiation: a receiver without tasks ignores the metadata and answers normally (SEP-1686 §4.1).
    return mode !== 'plain';
  }

  async start(request: StartRequest): Promise<StartResult> {
    const params = { name: request.name, arguments: request.arguments };
    const progress = request.progressToken === undefined ? {} : { progressToken: request.progressToken };
    if (!request.asTask) {
      return {
        kind: 'call',
        payload: this.plainCall({ ...params, _meta: { ...request.meta, ...progress } }, request.signal),
      };
    }
    const taskId = randomUUID();
    const taskMeta = { taskId, ...(request.ttlMs !== undefined && { keepAlive: request.ttlMs }) };
    let markCreated!: (created: boolean) => void;
    const created = new Promise<boolean>((resolve) => (markCreated = resolve));
    const stopListening = this.context.raw.onNotification((notification) => {
      if (notification.method === SepMethod.created && relatedTaskId(notification.params) === taskId) {
        markCreated(true);
      }
    });
    const payload = this.sendOriginal(
      taskId,
      { ...params, _meta: { ...request.meta, [SEP_TASK_META]: taskMeta } },
      () => markCreated(true),
    );
    void payload.finally(stopListening).catch(() => undefined);
    void created.then(stopListening);
    return {
      kind: 'task',
      snapshot: {
        taskId,
        status: 'submitted',
        ...(request.ttlMs !== undefined && { ttlMs: request.ttlMs }),
        dialect: SEP_GENERATION,
      },
      requestId: this.requestIds.get(taskId),
      created,
      payload,
    };
  }

  async get(taskId: string): Promise<PollResult> {
    const result = await this.call(SepMethod.get, taskId);
    const parsed = SepTaskSchema.safeParse(result);
    if (!parsed.success) throw new TaskProtocolError(`Invalid tasks/get result: ${parsed.error.message}`);
    return { snapshot: snapshotFromSepTask(parsed.data) };
  }

  async payload(snapshot: TaskSnapshot): Promise<TaskPayload | undefined> {
    // Results exist only for completed tasks (SEP-1686 §4.6); a failed task's description is its `error`.
    if (snapshot.status !== 'completed') return undefined;
    try {
      return {
        kind: 'result',
        result: (await this.call(SepMethod.result, snapshot.taskId as string)) as CallToolResult,
      };
    } catch (error) {
      if (error instanceof TaskRpcError) return { kind: 'error', error: error.error };
      throw error;
    }
  }

  onInputRequired(): InputReaction {
    // The receiver's requests travel as ordinary server requests and reach the host's handlers directly.
    return {};
  }

  async cancel(taskId: string, requestId?: string | number): Promise<CancelAck> {
    const id = this.requestIds.get(taskId) ?? requestId;
    if (id === undefined) {
      throw new TaskNotSupportedError(
        'notifications/cancelled',
        'SEP-1686 cancels a task through its original request id, which is not known for this task',
      );
    }
    // SEP-1686 §4.8: notifications/cancelled for the original request; the receiver never answers it afterwards,
    // and tasks/get confirms the outcome.
    this.context.raw.cancel(id, 'Cancelled by the client');
    if (typeof id === 'string')
      this.context.raw.abandon(id, new TaskConnectionError('The original request was cancelled'));
    return { kind: 'accepted' };
  }

  async list(cursor?: string): Promise<TaskPage> {
    const result = await this.request(SepMethod.list, cursor === undefined ? {} : { cursor });
    const parsed = SepTaskListSchema.safeParse(result);
    if (!parsed.success) throw new TaskProtocolError(`Invalid tasks/list result: ${parsed.error.message}`);
    return {
      tasks: parsed.data.tasks.map(snapshotFromSepTask),
      ...(parsed.data.nextCursor !== undefined && { nextCursor: parsed.data.nextCursor }),
    };
  }

  async delete(taskId: string): Promise<void> {
    await this.call(SepMethod.delete, taskId);
  }

  notificationTaskId(): string | undefined {
    return undefined;
  }

  /** The original request, re-sent with the same task id if the connection drops before an answer. */
  private async sendOriginal(
    taskId: string,
    params: Record<string, unknown>,
    markCreated: () => void,
  ): Promise<TaskPayload> {
    for (let attempt = 0; ; attempt++) {
      const call = this.context.raw.request('tools/call', params);
      this.requestIds.set(taskId, call.id);
      let reply: RawReply;
      try {
        reply = await call.reply;
      } catch (error) {
        if (!(error instanceof TaskConnectionError) || this.context.raw.isClosed || attempt >= MAX_RESENDS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
        continue;
      }
      if (reply.ok) return { kind: 'result', result: reply.result as CallToolResult };
      if (
        attempt > 0 &&
        reply.error.code === ErrorCodes.INVALID_PARAMS &&
        /already exists/i.test(reply.error.message)
      ) {
        // The earlier attempt did create the task (SEP-1686 §7.1): it is followed by polling instead.
        markCreated();
        throw new TaskConnectionError('The original response was lost; the task is followed by polling');
      }
      return { kind: 'error', error: reply.error };
    }
  }

  private async plainCall(params: Record<string, unknown>, signal: AbortSignal): Promise<TaskPayload> {
    try {
      const result = await this.context.client.request({ method: 'tools/call', params }, AnyResult, {
        timeout: MAX_TIMER_MS,
        signal,
      });
      return { kind: 'result', result: result as CallToolResult };
    } catch (error) {
      if (error instanceof ProtocolError) return { kind: 'error', error: rpcErrorOf(error) };
      throw toTaskClientError(error);
    }
  }

  /** A task method; SEP-1686 puts the related-task key on these requests (§3.2, §3.3, §3.6). */
  private async call(method: string, taskId: string): Promise<Record<string, unknown>> {
    try {
      return await this.request(method, { taskId, _meta: { [SEP_RELATED_TASK_META]: { taskId } } });
    } catch (error) {
      if (error instanceof TaskRpcError && error.code === ErrorCodes.INVALID_PARAMS && method !== SepMethod.result) {
        throw new TaskNotFoundError(taskId, error.error);
      }
      throw error;
    }
  }

  private async request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    try {
      return await this.context.client.request({ method, params }, AnyResult, {
        timeout: this.context.requestTimeoutMs,
      });
    } catch (error) {
      throw toTaskClientError(error);
    }
  }
}
