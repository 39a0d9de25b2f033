import { isTerminal, type TaskRecord } from '../../engine/index.js';
import { ErrorCodes, RpcError, isObject, paramsOf, type JsonRpcRequest, type TaskOperation } from '../../rpc/index.js';
import {
  answerError,
  deliverInputs,
  listPage,
  ownedBy,
  requireTaskId,
  type Answerer,
  type DialectAnswer,
  type DialectContext,
  type Decoration,
  type ServerDialect,
  type SessionView,
  type TaskPushView,
  withProgressMeta,
  taskMetaFor,
} from '../shared/index.js';
import {
  CORE_GENERATION,
  CORE_PROTOCOL_VERSION,
  CoreMethod,
  coreCapabilities,
  coreRelatedMeta,
  RELATED_TASK_META,
  withTaskSupport,
  type CoreTaskMethod,
} from '../../protocol/index.js';
import { toCoreTask } from './wireTask.js';

const CANCELLED_RESULT_TEXT = 'The task was cancelled before it produced a result.';

/** What each task method does, for the error a failure maps to. */
const OPERATIONS: Record<CoreTaskMethod, TaskOperation> = {
  [CoreMethod.get]: 'retrieve',
  [CoreMethod.result]: 'retrieve',
  [CoreMethod.list]: 'list',
  [CoreMethod.cancel]: 'cancel',
};

/** spec R42 R44: `notifications/tasks/status` on each status change, without related-task _meta. */
export const CORE_STATUS_PUSH: TaskPushView = {
  method: CoreMethod.status,
  key: (record) => record.status,
  keyIsStatus: true,
  params: (record) => ({ ...toCoreTask(record), ...withProgressMeta(record) }),
};

/**
 * 2025-11-25 tasks (TASKS-SPEC §1): the requestor augments `tools/call` with `params.task`, the receiver answers with
 * `CreateTaskResult` at once and serves `tasks/get|result|list|cancel`.
 */
export class CoreDialect implements ServerDialect {
  /** 2025-era requests only; SEP-1686 answers its own before this dialect is asked (docs/generations.md). */
  answererFor(request: JsonRpcRequest, session: SessionView): Answerer | undefined {
    if (session.modern) return undefined;
    if (request.method === 'tools/call') {
      if (!this.answersToolsCall(request, session.policyFor)) return undefined;
      return { operation: 'create', answer: (r, ctx) => this.toolsCall(r, ctx) };
    }
    if (!isTaskMethod(request.method)) return undefined;
    return { operation: OPERATIONS[request.method], answer: (r, ctx) => this.tasksMethod(r, ctx) };
  }

  decorate(request: JsonRpcRequest, session: SessionView): Decoration | undefined {
    if (request.method === 'initialize') {
      return (result) => {
        if (result['protocolVersion'] !== CORE_PROTOCOL_VERSION) return result;
        const capabilities = isObject(result['capabilities']) ? result['capabilities'] : {};
        // spec R1 R66
        return { ...result, capabilities: { ...capabilities, tasks: coreCapabilities(session.caller.listable) } };
      };
    }
    if (request.method !== 'tools/list') return undefined;
    return (result) => {
      // `execution.taskSupport` exists only in 2025-11-25; the extension removed it.
      const negotiated = session.negotiatedVersion;
      if (session.modern || (negotiated !== undefined && negotiated !== CORE_PROTOCOL_VERSION)) return result;
      return withTaskSupport(result, (name) => session.policyFor(name)?.taskSupport);
    };
  }

  /**
   * Whether this dialect answers a `tools/call` itself: one that asks for a task, or a plain call to a tool that only
   * runs as a task. Everything else is served by the SDK server as usual.
   */
  answersToolsCall(request: JsonRpcRequest, policyFor: DialectContext['policyFor']): boolean {
    const params = paramsOf(request);
    const name = params?.['name'];
    if (!params || typeof name !== 'string') return false;
    return params['task'] !== undefined || policyFor(name)?.taskSupport === 'required';
  }

  /** Answers a task-augmented `tools/call`: creates the task, or refuses the call. */
  async toolsCall(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const params = paramsOf(request) as Record<string, unknown>;
    const name = params['name'] as string;
    const support = ctx.policyFor(name)?.taskSupport ?? 'forbidden';
    const task = params['task'];
    if (task === undefined) {
      // spec R7: a plain call to a `required` tool is -32601 (TASKS-SPEC A1).
      return answerError(
        ErrorCodes.METHOD_NOT_FOUND,
        `Task augmentation required for tools/call requests: tool '${name}' only runs as a task`,
      );
    }
    if (!isObject(task)) return answerError(ErrorCodes.INVALID_PARAMS, 'Invalid params: task must be an object');
    // spec R5: a task on a tool that does not support it.
    if (support === 'forbidden') {
      return answerError(ErrorCodes.METHOD_NOT_FOUND, `Tool '${name}' does not support task-augmented calls`);
    }
    const ttl = task['ttl'];
    if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < 0)) {
      return answerError(
        ErrorCodes.INVALID_PARAMS,
        'Invalid params: task.ttl must be a non-negative number of milliseconds',
      );
    }
    const policy = ctx.policyFor(name);
    // spec R10 R29: the requested ttl (null: unlimited), else the tool's default; the engine clamps it.
    const requestedTtl = ttl === null ? null : typeof ttl === 'number' ? ttl : policy?.ttlMs;
    const { task: _task, ...callParams } = params;
    const meta = isObject(params['_meta']) ? params['_meta'] : undefined;
    const progressToken = meta?.['progressToken'];
    const { task: record } = await ctx.engine.create({
      ...ownedBy(ctx.caller),
      request: { method: 'tools/call', params: callParams },
      dialect: CORE_GENERATION,
      ...(requestedTtl !== undefined && { retention: { kind: 'ttl' as const, ttlMs: requestedTtl } }),
      pollIntervalMs: policy?.pollIntervalMs ?? ctx.defaultPollIntervalMs,
      toolErrorStatus: 'failed',
      retrySafe: policy?.retrySafe ?? false,
      ...((typeof progressToken === 'string' || typeof progressToken === 'number') && { progressToken }),
      meta: taskMetaFor(ctx, { toolName: name, clientCapabilities: ctx.clientCapabilities, policy }),
    });
    ctx.onTaskCreated(record);
    // spec R11 R15: answered once durable, status `working`.
    return { result: { task: toCoreTask(record) } };
  }

  /** Answers `tasks/get`, `tasks/result`, `tasks/list` or `tasks/cancel`. */
  private async tasksMethod(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const params = paramsOf(request);
    if (!params) throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: params must be an object');
    switch (request.method as CoreTaskMethod) {
      case CoreMethod.get: {
        // spec R57 R41: unknown ids are -32602; no related-task _meta on the result.
        const record = await ctx.engine.get(ctx.caller.scope, requireTaskId(params));
        ctx.advertisePollInterval(record.pollIntervalMs);
        // GetTaskResult is Result & Task: its `_meta` carries the structured progress.
        return { result: { ...toCoreTask(record), ...withProgressMeta(record) } };
      }
      case CoreMethod.cancel:
        // spec R49 R50: terminal tasks are refused; the answer is already `cancelled`.
        return { result: { ...toCoreTask(await ctx.engine.cancel(ctx.caller.scope, requireTaskId(params))) } };
      case CoreMethod.list:
        return this.list(params, ctx);
      case CoreMethod.result:
        return this.result(requireTaskId(params), ctx);
    }
  }

  private async list(params: Record<string, unknown>, ctx: DialectContext): Promise<DialectAnswer> {
    // spec R66: not served where callers cannot be told apart.
    if (!ctx.caller.listable)
      return answerError(
        ErrorCodes.METHOD_NOT_FOUND,
        'Method not found: tasks/list is not available without an identifiable caller',
      );
    // spec R68: the caller's own tasks.
    return listPage(params, ctx, toCoreTask);
  }

  /**
   * spec R33 R34 R35 R36: holds the response until the task is terminal, waking on events, and meanwhile delivers
   * the task's input requests on this request's stream (spec R24 R38, §1.10).
   */
  private async result(taskId: string, ctx: DialectContext): Promise<DialectAnswer> {
    // Heard from before the first read to the answer, so each wait below starts without reading the task again.
    const watch = ctx.engine.watch(taskId);
    const delivered: string[] = [];
    try {
      let record = await ctx.engine.get(ctx.caller.scope, taskId);
      while (!isTerminal(record.status)) {
        // spec R24 R37 R38: each request carries the task it belongs to.
        await deliverInputs(record, ctx, delivered, RELATED_TASK_META);
        const next = await ctx.engine.waitForChange(taskId, record.version, ctx.signal, watch);
        record = next ?? (await ctx.engine.get(ctx.caller.scope, taskId));
      }
      // The outcome reaches its requestor: the task may make room at a stored-task bound (not awaited: the answer
      // need not wait for the mark).
      void ctx.engine.resultDelivered(record);
      return outcomeAnswer(record);
    } finally {
      watch.stop();
      for (const entry of delivered) ctx.inFlightInputs.delete(entry);
    }
  }
}

function isTaskMethod(method: string): method is CoreTaskMethod {
  return Object.hasOwn(OPERATIONS, method);
}

/** What `tasks/result` returns for a terminal task: exactly the stored result or JSON-RPC error. */
function outcomeAnswer(record: TaskRecord): DialectAnswer {
  const related = coreRelatedMeta(record.taskId);
  const outcome = record.outcome;
  if (outcome?.kind === 'error') return { error: outcome.error };
  if (outcome?.kind === 'result') {
    const meta = isObject(outcome.result['_meta']) ? outcome.result['_meta'] : {};
    return { result: { ...outcome.result, _meta: { ...meta, ...related } } };
  }
  // A cancelled task has no outcome; a tool call "would have returned" nothing, so say so in a tool result.
  return { result: { content: [{ type: 'text', text: CANCELLED_RESULT_TEXT }], isError: true, _meta: related } };
}
