import { randomUUID } from 'node:crypto';

import { ProtocolError, type ClientCapabilities } from '@modelcontextprotocol/client';

import { ErrorCodes, CORE_GENERATION, CoreMethod, RELATED_TASK_META, relatedTaskId } from '../protocol/index.js';
import type { InputRouter } from './InputRouter.js';
import { TaskRpcError } from './TaskClientError.js';

type HostedStatus = 'working' | 'completed' | 'failed' | 'cancelled';

interface HostedTask {
  taskId: string;
  status: HostedStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
  abort: AbortController;
  done: Promise<void>;
  expiry: ReturnType<typeof setTimeout>;
}

export interface ClientTaskHostOptions {
  /** Retention granted when the server asks for none or for more (spec R29, R71). */
  maxTtlMs?: number;
  pollIntervalMs?: number;
}

/**
 * The client as a 2025-11-25 receiver (spec §1.10 step 7): a server may task-augment `elicitation/create` and
 * `sampling/createMessage`, and then polls the client with `tasks/get` / `tasks/result` and may `tasks/cancel`.
 */
export class ClientTaskHost {
  private readonly tasks = new Map<string, HostedTask>();
  private readonly maxTtlMs: number;
  private readonly pollIntervalMs: number;

  constructor(
    private readonly inputs: InputRouter,
    options: ClientTaskHostOptions = {},
  ) {
    this.maxTtlMs = options.maxTtlMs ?? 30 * 60_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
  }

  /** The `tasks` client capability; only request types with a handler are listed (spec R1, R2). */
  capabilities(): ClientCapabilities['tasks'] | undefined {
    if (!this.inputs.canElicit && !this.inputs.canSample) return undefined;
    return {
      list: {},
      cancel: {},
      requests: {
        ...(this.inputs.canElicit && { elicitation: { create: {} } }),
        ...(this.inputs.canSample && { sampling: { createMessage: {} } }),
      },
    };
  }

  accepts(method: string): boolean {
    return (
      (method === 'elicitation/create' && this.inputs.canElicit) ||
      (method === 'sampling/createMessage' && this.inputs.canSample)
    );
  }

  /** Takes a task-augmented request: answers at once with `CreateTaskResult` (spec R11) and runs the handler. */
  create(method: string, params: Record<string, unknown>): Record<string, unknown> {
    const requested = (params['task'] as { ttl?: unknown } | undefined)?.ttl;
    // spec R29 R30: the requested ttl may be lowered; the actual one is reported.
    const ttl = typeof requested === 'number' && requested > 0 ? Math.min(requested, this.maxTtlMs) : this.maxTtlMs;
    const now = new Date().toISOString();
    const abort = new AbortController();
    // spec R13 R65: ids are generated here and unguessable.
    const taskId = randomUUID();
    const task: HostedTask = {
      taskId,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttl,
      abort,
      done: Promise.resolve(),
      // spec R31: deleted once the ttl (from creation) has elapsed.
      expiry: setTimeout(() => this.forget(taskId), ttl),
    };
    task.expiry.unref?.();
    task.done = this.run(task, method, params);
    this.tasks.set(taskId, task);
    return { task: this.wire(task) };
  }

  /** Serves `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` for the hosted tasks. */
  async handle(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (method === CoreMethod.list) {
      // spec R58: this receiver never hands out cursors, so any cursor is unknown.
      if (params['cursor'] !== undefined)
        throw new ProtocolError(ErrorCodes.INVALID_PARAMS, 'Failed to list tasks: invalid cursor');
      return { tasks: [...this.tasks.values()].map((task) => this.wire(task)) };
    }
    // spec R39: params.taskId is authoritative.
    const taskId = params['taskId'];
    const task = typeof taskId === 'string' ? this.tasks.get(taskId) : undefined;
    // spec R57
    if (task === undefined)
      throw new ProtocolError(ErrorCodes.INVALID_PARAMS, 'Failed to retrieve task: Task not found');
    if (method === CoreMethod.get) return this.wire(task);
    if (method === CoreMethod.cancel) return this.cancel(task);
    if (method === CoreMethod.result) return this.result(task);
    throw new ProtocolError(ErrorCodes.METHOD_NOT_FOUND, `Method not found: ${method}`);
  }

  close(): void {
    for (const task of this.tasks.values()) {
      task.abort.abort();
      clearTimeout(task.expiry);
    }
    this.tasks.clear();
  }

  private async run(task: HostedTask, method: string, params: Record<string, unknown>): Promise<void> {
    try {
      const result = await this.inputs.answer(method, params, {
        dialect: CORE_GENERATION,
        ...(relatedTaskId(params) !== undefined && { taskId: relatedTaskId(params) }),
        signal: task.abort.signal,
      });
      this.finish(task, 'completed', { result });
    } catch (error) {
      const rpc = error instanceof TaskRpcError ? error.error : undefined;
      const message = error instanceof Error ? error.message : String(error);
      this.finish(task, 'failed', {
        error: rpc ?? { code: ErrorCodes.INTERNAL_ERROR, message },
        statusMessage: message,
      });
    }
  }

  private finish(
    task: HostedTask,
    status: 'completed' | 'failed',
    outcome: { result?: Record<string, unknown>; error?: HostedTask['error']; statusMessage?: string },
  ): void {
    // spec R51: a cancelled task stays cancelled whatever the handler does afterwards.
    if (task.status !== 'working') return;
    Object.assign(task, outcome, { status, lastUpdatedAt: new Date().toISOString() });
  }

  private cancel(task: HostedTask): Record<string, unknown> {
    // spec R49
    if (task.status !== 'working') {
      throw new ProtocolError(
        ErrorCodes.INVALID_PARAMS,
        `Cannot cancel task: already in terminal status '${task.status}'`,
      );
    }
    // spec R50: cancelled before the response is sent.
    task.status = 'cancelled';
    task.statusMessage = 'The task was cancelled by request.';
    task.lastUpdatedAt = new Date().toISOString();
    task.abort.abort();
    return this.wire(task);
  }

  /** spec R33 R34 R35 R36: blocks until terminal, then the result or the stored error, tagged with the task id. */
  private async result(task: HostedTask): Promise<Record<string, unknown>> {
    await Promise.race([task.done, new Promise((resolve) => task.abort.signal.addEventListener('abort', resolve))]);
    if (task.status === 'completed' && task.result !== undefined) {
      const meta = (task.result['_meta'] as Record<string, unknown> | undefined) ?? {};
      return { ...task.result, _meta: { ...meta, [RELATED_TASK_META]: { taskId: task.taskId } } };
    }
    if (task.status === 'cancelled')
      throw new ProtocolError(ErrorCodes.INTERNAL_ERROR, 'The task was cancelled before it produced a result');
    const error = task.error ?? { code: ErrorCodes.INTERNAL_ERROR, message: 'Internal error' };
    throw new ProtocolError(error.code, error.message, error.data);
  }

  private forget(taskId: string): void {
    const task = this.tasks.get(taskId);
    if (task === undefined) return;
    task.abort.abort();
    this.tasks.delete(taskId);
  }

  /** The 2025-11-25 Task (spec §1.5); no related-task `_meta` on get/list/cancel results (spec R41). */
  private wire(task: HostedTask): Record<string, unknown> {
    return {
      taskId: task.taskId,
      status: task.status,
      ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttl: task.ttl,
      pollInterval: this.pollIntervalMs,
    };
  }
}
