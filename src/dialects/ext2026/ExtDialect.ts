import { isTerminal, TaskTerminalError, withDeadline, type TaskRecord } from '../../engine/index.js';
import { ErrorCodes, RpcError, isObject, paramsOf, type JsonRpcRequest, type TaskOperation } from '../../rpc/index.js';
import {
  answerError,
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
  readTaskMeta,
  taskMetaFor,
} from '../shared/index.js';
import {
  declaresTasksExtension,
  envelopeCapabilities,
  EXT_GENERATION,
  ExtMethod,
  missingTasksExtensionData,
  ResultType,
  TASKS_EXTENSION,
  type EventSource,
  type ExtTaskMethod,
} from '../../protocol/index.js';
import { toDetailedTask, toExtTask } from './extWire.js';

const COMPLETE = { resultType: ResultType.complete } as const;
const DEFAULT_SYNC_WINDOW_MS = 250;

/** What each task method does, for the error a failure maps to. */
const OPERATIONS: Record<ExtTaskMethod, TaskOperation> = {
  [ExtMethod.get]: 'retrieve',
  [ExtMethod.update]: 'update',
  [ExtMethod.cancel]: 'cancel',
};

/**
 * SEP-2663 status push: the full DetailedTask on every change of a task a `subscriptions/listen` stream asked about.
 */
export const EXT_STATUS_PUSH: TaskPushView = {
  method: ExtMethod.status,
  key: (record) => JSON.stringify(toDetailedTask(record)) + JSON.stringify(record.progress ?? null),
  params: (record) => ({ ...toDetailedTask(record), ...withProgressMeta(record) }),
};

/** spec E14: -32021 with the capability the request lacked. */
function missingCapability(): DialectAnswer {
  return answerError(
    ErrorCodes.MISSING_REQUIRED_CLIENT_CAPABILITY,
    'Missing required client capability',
    missingTasksExtensionData(),
  );
}

/**
 * The 2026 tasks extension `io.modelcontextprotocol/tasks` (SEP-2663, TASKS-SPEC §3): the server decides per request
 * whether a `tools/call` becomes a task; results are inlined in `tasks/get`; input is answered with `tasks/update`.
 */
export class ExtDialect implements ServerDialect {
  constructor(
    private readonly options: {
      /** The task's event source for its CreateTaskResult (Task Event Sources), when Events are served. */
      eventSourceFor?: (record: TaskRecord, params: Record<string, unknown>) => EventSource | undefined;
    } = {},
  ) {}

  /**
   * 2026-07-28 requests: the extension's methods and server-directed task creation. `tasks/result` and `tasks/list`
   * do not exist on this wire; they reach the SDK server, which answers -32601.
   */
  answererFor(request: JsonRpcRequest, session: SessionView): Answerer | undefined {
    if (!session.modern) return undefined;
    if (request.method === 'tools/call') {
      if (!this.answersToolsCall(request, session.policyFor)) return undefined;
      return { operation: 'create', answer: (r, ctx) => this.toolsCall(r, ctx) };
    }
    if (!Object.hasOwn(OPERATIONS, request.method)) return undefined;
    return { operation: OPERATIONS[request.method as ExtTaskMethod], answer: (r, ctx) => this.tasksMethod(r, ctx) };
  }

  /** The extension is advertised on the 2026-07-28 wire, the legacy `tasks` capability never (TASKS-SPEC §3.7). */
  decorate(request: JsonRpcRequest): Decoration | undefined {
    if (request.method !== ExtMethod.discover) return undefined;
    return (result) => {
      const capabilities = isObject(result['capabilities']) ? result['capabilities'] : {};
      const { tasks: _legacy, ...rest } = capabilities;
      const extensions = isObject(rest['extensions']) ? rest['extensions'] : {};
      return { ...result, capabilities: { ...rest, extensions: { ...extensions, [TASKS_EXTENSION]: {} } } };
    };
  }

  /** The legacy `params.task` must be ignored on the 2026-07-28 wire, so it never reaches the SDK server there. */
  forward(request: JsonRpcRequest, session: SessionView): JsonRpcRequest {
    if (!session.modern || request.method !== 'tools/call' || !isObject(request.params)) return request;
    if (!('task' in request.params)) return request;
    const { task: _task, ...params } = request.params;
    return { ...request, params };
  }

  /**
   * Whether this dialect answers a 2026-07-28 `tools/call`: a declaring client calling a tool that may run as a task,
   * or a non-declaring client calling one that can only run as a task (refused). Other calls run synchronously.
   */
  answersToolsCall(request: JsonRpcRequest, policyFor: DialectContext['policyFor']): boolean {
    const params = paramsOf(request);
    const name = params?.['name'];
    if (!params || typeof name !== 'string') return false;
    const support = policyFor(name)?.taskSupport ?? 'forbidden';
    return declaresTasksExtension(params) ? support !== 'forbidden' : support === 'required';
  }

  async toolsCall(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const params = paramsOf(request) as Record<string, unknown>;
    const name = params['name'] as string;
    // spec E1: only a request that itself declares the extension may get a task.
    if (!declaresTasksExtension(params)) return missingCapability();
    const policy = ctx.policyFor(name);
    // The legacy `task` param is ignored on this wire; multi-round-trip answers go to the tool's first run.
    const { task: _legacyTask, inputResponses, requestState, ...callParams } = params;
    const multiRoundTrip = policy?.inputStyle === 'multiRoundTrip';
    const { task: record } = await ctx.engine.create({
      ...ownedBy(ctx.caller),
      request: { method: 'tools/call', params: callParams },
      dialect: EXT_GENERATION,
      ...(policy?.ttlMs !== undefined && { retention: { kind: 'ttl' as const, ttlMs: policy.ttlMs } }),
      pollIntervalMs: policy?.pollIntervalMs ?? ctx.defaultPollIntervalMs,
      // spec E15: a tool result with isError is `completed` on this wire.
      toolErrorStatus: 'completed',
      retrySafe: policy?.retrySafe ?? false,
      meta: taskMetaFor(ctx, {
        toolName: name,
        clientCapabilities: envelopeCapabilities(params),
        policy,
        multiRoundTrip: multiRoundTrip
          ? {
              ...(isObject(inputResponses) && { responses: inputResponses }),
              ...(typeof requestState === 'string' && { requestState }),
            }
          : undefined,
      }),
    });
    if (multiRoundTrip) {
      const early = await this.settleEarly(record, policy?.syncWindowMs ?? DEFAULT_SYNC_WINDOW_MS, ctx);
      if (early) return early;
    }
    ctx.onTaskCreated(record);
    // spec TS1 TS2: the task's event source, for a request that declared Events.
    const eventSource = this.options.eventSourceFor?.(record, params);
    // spec E3 E4: the flat CreateTaskResult, answered once the task is durable.
    return { result: { ...toExtTask(record), resultType: ResultType.task, ...(eventSource && { eventSource }) } };
  }

  /**
   * spec E5: a multi-round-trip tool that asks its questions (or finishes) within the window is answered without a
   * task; the task record that backed the attempt was never shown to anyone and is removed.
   */
  private async settleEarly(
    record: TaskRecord,
    windowMs: number,
    ctx: DialectContext,
  ): Promise<DialectAnswer | undefined> {
    const window = withDeadline(ctx.signal, windowMs);
    let current: TaskRecord | undefined = record;
    try {
      while (current && !isTerminal(current.status) && !current.suspended) {
        current = await ctx.engine.waitForChange(record.taskId, current.version, window.signal);
      }
    } catch {
      return undefined; // the window closed: the call becomes a task
    } finally {
      window.clear();
    }
    if (!current) return undefined;
    let answer: DialectAnswer;
    if (current.suspended) {
      const state = readTaskMeta(current).multiRoundTrip ?? {};
      const keys = state.keys ?? {};
      const inputRequests = Object.fromEntries(
        Object.entries(current.inputRequests).map(([key, pending]) => [
          keys[key] ?? key,
          { method: pending.method, ...(pending.params && { params: pending.params }) },
        ]),
      );
      answer = {
        result: {
          resultType: ResultType.inputRequired,
          inputRequests,
          ...(typeof state.requestState === 'string' && { requestState: state.requestState }),
        },
      };
    } else if (current.outcome?.kind === 'error') {
      answer = { error: current.outcome.error };
    } else {
      answer = {
        result: {
          ...(current.outcome?.kind === 'result' ? current.outcome.result : {}),
          resultType: ResultType.complete,
        },
      };
    }
    await ctx.engine.delete(ctx.caller.scope, record.taskId).catch(() => {});
    return answer;
  }

  /** Answers `tasks/get`, `tasks/update` or `tasks/cancel` on the 2026-07-28 wire. */
  private async tasksMethod(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const params = paramsOf(request);
    // spec E14: a client that does not declare the extension on this request gets -32021.
    if (!declaresTasksExtension(params)) return missingCapability();
    const taskId = requireTaskId(params);
    switch (request.method as ExtTaskMethod) {
      case ExtMethod.get: {
        // spec E8: the status-matching variant; spec E14: unknown ids are -32602.
        const record = await ctx.engine.get(ctx.caller.scope, taskId);
        ctx.advertisePollInterval(record.pollIntervalMs);
        // spec E15: a terminal task's result or error is inlined here, so this read delivers it (a stored-task bound
        // may then evict the task; see FetchedEviction).
        void ctx.engine.resultDelivered(record);
        // spec E16 leaves tasks without progress notifications: the stored progress rides in the result's `_meta`.
        return { result: { ...toDetailedTask(record), ...withProgressMeta(record), ...COMPLETE } };
      }
      case ExtMethod.update:
        return this.update(taskId, params as Record<string, unknown>, ctx);
      case ExtMethod.cancel:
        return this.cancel(taskId, ctx);
    }
  }

  /** spec E12: answers for outstanding keys are taken, others ignored; acknowledged with an empty result. */
  private async update(taskId: string, params: Record<string, unknown>, ctx: DialectContext): Promise<DialectAnswer> {
    const responses = params['inputResponses'];
    if (!isObject(responses))
      throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: inputResponses must be an object');
    const answers = Object.fromEntries(
      Object.entries(responses).flatMap(([key, value]) => (isObject(value) ? [[key, { result: value }]] : [])),
    );
    await ctx.engine.answerInput(ctx.caller.scope, taskId, answers);
    return { result: { ...COMPLETE } };
  }

  /** spec E13: acknowledged with an empty result, terminal tasks included; the work is aborted if it runs here. */
  private async cancel(taskId: string, ctx: DialectContext): Promise<DialectAnswer> {
    try {
      await ctx.engine.cancel(ctx.caller.scope, taskId);
    } catch (error) {
      if (!(error instanceof TaskTerminalError)) throw error;
    }
    return { result: { ...COMPLETE } };
  }
}
