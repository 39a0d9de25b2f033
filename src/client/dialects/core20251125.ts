import { ProtocolError, type CallToolResult, type Client, type ServerCapabilities } from '@modelcontextprotocol/client';
import * as z from 'zod';

import {
  ErrorCodes,
  CORE_GENERATION,
  CoreMethod,
  CoreTaskListSchema,
  CoreTaskSchema,
  coreTaskSupport,
  type CoreTask,
} from '../../protocol/index.js';
import { MAX_TIMER_MS, type RawChannel } from '../RawChannel.js';
import { TaskNotFoundError, TaskNotSupportedError, TaskProtocolError } from '../TaskClientError.js';
import type { TaskPayload } from '../TaskOutcome.js';
import { progressOfWire, type TaskSnapshot } from '../TaskSnapshot.js';
import { rpcErrorOf, toTaskClientError } from '../toTaskClientError.js';
import type { ToolCatalog } from '../ToolCatalog.js';
import type {
  CallMode,
  CancelAck,
  InputReaction,
  InputState,
  PollResult,
  StartRequest,
  StartResult,
  TaskDialect,
  TaskPage,
} from './TaskDialect.js';
import { waitBudgetMs } from './waitBudget.js';

const AnyResult = z.looseObject({});

export function snapshotFromTask(task: CoreTask): TaskSnapshot {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttl,
    ...(task.pollInterval !== undefined && { pollIntervalMs: task.pollInterval }),
    ...progressOfWire(task),
    dialect: CORE_GENERATION,
  };
}

function parseTask(value: unknown, what: string): CoreTask {
  const parsed = CoreTaskSchema.safeParse(value);
  if (!parsed.success) throw new TaskProtocolError(`Invalid Task in ${what}: ${parsed.error.message}`);
  return parsed.data;
}

export interface Core20251125Context {
  client: Client;
  raw: RawChannel;
  /** From `initialize`, or from the handle store when an HTTP session is resumed without a new handshake. */
  capabilities: ServerCapabilities | undefined;
  tools: ToolCatalog;
  requestTimeoutMs: number;
}

/** MCP 2025-11-25 core tasks over the SDK client, with explicit schemas for the task methods (spec §1). */
export class Core20251125Dialect implements TaskDialect {
  readonly era = 'legacy';

  constructor(private readonly context: Core20251125Context) {}

  /** Capabilities are objects whose presence means support (spec A2). */
  get toolCallTasks(): boolean {
    return coreTaskSupport(this.context.capabilities).toolCall;
  }

  get canCancel(): boolean {
    return coreTaskSupport(this.context.capabilities).cancel;
  }

  get canList(): boolean {
    return coreTaskSupport(this.context.capabilities).list;
  }

  get name(): typeof CORE_GENERATION | 'none' {
    return this.toolCallTasks ? CORE_GENERATION : 'none';
  }

  async plan(tool: string, mode: CallMode): Promise<boolean> {
    if (!this.toolCallTasks) {
      // spec R3 R4
      if (mode === 'task') {
        throw new TaskNotSupportedError(
          'tasks.requests.tools.call',
          'The server does not accept task-augmented tools/call (capability tasks.requests.tools.call is missing)',
        );
      }
      return false;
    }
    const support = await this.context.tools.taskSupport(tool);
    if (support === 'required') {
      // spec R7
      if (mode === 'plain') {
        throw new TaskNotSupportedError(
          'taskSupport',
          `The tool ${tool} must be called as a task (taskSupport: required)`,
        );
      }
      return true;
    }
    // spec R6
    if (support === 'optional') return mode !== 'plain';
    // spec R5
    if (mode === 'task') {
      throw new TaskNotSupportedError(
        'taskSupport',
        `The tool ${tool} cannot be called as a task (taskSupport: forbidden)`,
      );
    }
    return false;
  }

  async start(request: StartRequest): Promise<StartResult> {
    if (!request.asTask) return { kind: 'call', payload: this.plainCall(request) };
    // spec R10
    const task = request.ttlMs === undefined ? {} : { ttl: request.ttlMs };
    let result: Record<string, unknown>;
    try {
      result = await this.context.client.request(
        { method: 'tools/call', params: { ...callParams(request), task } },
        AnyResult,
        // A receiver that ignores `task` runs the tool before answering (spec A6): no timeout shorter than the work.
        { timeout: MAX_TIMER_MS, signal: request.signal },
      );
    } catch (error) {
      if (error instanceof ProtocolError) return { kind: 'call', payload: Promise.resolve(errorPayload(error)) };
      throw toTaskClientError(error);
    }
    // CreateTaskResult is decoded explicitly (spec A3); an ordinary result means the server ran it plainly (spec A6).
    if (typeof result['task'] === 'object' && result['task'] !== null) {
      return { kind: 'task', snapshot: snapshotFromTask(parseTask(result['task'], 'CreateTaskResult')) };
    }
    return { kind: 'call', payload: Promise.resolve({ kind: 'result', result: result as CallToolResult }) };
  }

  async get(taskId: string): Promise<PollResult> {
    try {
      const result = await this.context.client.request({ method: CoreMethod.get, params: { taskId } }, AnyResult, {
        timeout: this.context.requestTimeoutMs,
      });
      // GetTaskResult is a flat Task (spec §1.6).
      return { snapshot: snapshotFromTask(parseTask(result, CoreMethod.get)) };
    } catch (error) {
      throw this.taskError(error, taskId);
    }
  }

  async payload(snapshot: TaskSnapshot): Promise<TaskPayload | undefined> {
    // No payload is defined for a cancelled task (spec A8).
    if (snapshot.status === 'cancelled' || snapshot.taskId === undefined) return undefined;
    return this.fetchResult(snapshot);
  }

  onInputRequired(poll: PollResult, state: InputState): InputReaction {
    if (state.awaitingPayload) return {};
    // spec R25: tasks/result carries the server's requests (spec §1.10 step 4) and, once terminal, the payload.
    return { payload: this.fetchResult(poll.snapshot) };
  }

  async cancel(taskId: string): Promise<CancelAck> {
    if (!this.canCancel) {
      throw new TaskNotSupportedError(
        'tasks.cancel',
        'The server does not offer tasks/cancel (capability tasks.cancel is missing)',
      );
    }
    try {
      const result = await this.context.client.request({ method: CoreMethod.cancel, params: { taskId } }, AnyResult, {
        timeout: this.context.requestTimeoutMs,
      });
      return { kind: 'accepted', snapshot: snapshotFromTask(parseTask(result, CoreMethod.cancel)) };
    } catch (error) {
      // spec R49: a terminal (or unknown) task answers -32602; the caller settles through tasks/get.
      if (error instanceof ProtocolError && error.code === ErrorCodes.INVALID_PARAMS)
        return { kind: 'rejected', error: rpcErrorOf(error) };
      throw toTaskClientError(error);
    }
  }

  async list(cursor?: string): Promise<TaskPage> {
    if (!this.canList) {
      throw new TaskNotSupportedError(
        'tasks.list',
        'The server does not offer tasks/list (capability tasks.list is missing)',
      );
    }
    try {
      const result = await this.context.client.request(
        { method: CoreMethod.list, params: cursor === undefined ? {} : { cursor } },
        AnyResult,
        { timeout: this.context.requestTimeoutMs },
      );
      const parsed = CoreTaskListSchema.safeParse(result);
      if (!parsed.success) throw new TaskProtocolError(`Invalid tasks/list result: ${parsed.error.message}`);
      return {
        tasks: parsed.data.tasks.map(snapshotFromTask),
        ...(parsed.data.nextCursor !== undefined && { nextCursor: parsed.data.nextCursor }),
      };
    } catch (error) {
      throw toTaskClientError(error);
    }
  }

  notificationTaskId(method: string, params: Record<string, unknown> | undefined): string | undefined {
    // spec R43: only a prompt to poll now; the status itself is read from tasks/get.
    if (method !== CoreMethod.status) return undefined;
    const taskId = params?.['taskId'];
    return typeof taskId === 'string' ? taskId : undefined;
  }

  private async plainCall(request: StartRequest): Promise<TaskPayload> {
    try {
      const result = await this.context.client.request(
        { method: 'tools/call', params: callParams(request) },
        AnyResult,
        { timeout: MAX_TIMER_MS, signal: request.signal },
      );
      return { kind: 'result', result: result as CallToolResult };
    } catch (error) {
      if (error instanceof ProtocolError) return errorPayload(error);
      throw toTaskClientError(error);
    }
  }

  /**
   * `tasks/result`: blocks until terminal (spec R34), then the result or the stored JSON-RPC error (spec R33, R35).
   * It goes through the raw channel so that a Streamable HTTP stream that drops (spec R20) rejects it at once and
   * polling carries on; the server's requests that ride its stream still reach the SDK's handlers.
   */
  private async fetchResult(snapshot: TaskSnapshot): Promise<TaskPayload> {
    const reply = await this.context.raw.request(
      CoreMethod.result,
      { taskId: snapshot.taskId },
      { timeoutMs: waitBudgetMs(snapshot) },
    ).reply;
    if (!reply.ok) return { kind: 'error', error: reply.error };
    return { kind: 'result', result: reply.result as CallToolResult };
  }

  private taskError(error: unknown, taskId: string): Error {
    // spec R57
    if (error instanceof ProtocolError && error.code === ErrorCodes.INVALID_PARAMS)
      return new TaskNotFoundError(taskId, rpcErrorOf(error));
    return toTaskClientError(error);
  }
}

/** The tools/call params; progress keeps flowing for the task's whole life under this token (spec R55). */
function callParams(request: StartRequest): Record<string, unknown> {
  return {
    name: request.name,
    arguments: request.arguments,
    ...((request.progressToken !== undefined || request.meta !== undefined) && {
      _meta: { ...request.meta, ...(request.progressToken !== undefined && { progressToken: request.progressToken }) },
    }),
  };
}

function errorPayload(error: ProtocolError): TaskPayload {
  return { kind: 'error', error: rpcErrorOf(error) };
}
