import { isTerminal, TaskConflictError, TaskTerminalError, type TaskRecord } from '../../engine/index.js';
import { ErrorCodes, RpcError, isObject, paramsOf, type JsonRpcRequest, type TaskOperation } from '../../rpc/index.js';
import {
  answerError,
  deliverInputs,
  listPage,
  outstandingInputs,
  ownedBy,
  RequestCancelled,
  requireTaskId,
  type Caller,
  type Answerer,
  type DialectAnswer,
  type DialectContext,
  type ServerDialect,
  type SessionView,
  withProgressMeta,
  taskMetaFor,
} from '../shared/index.js';
import {
  carriesSepRelatedTask,
  CORE_PROTOCOL_VERSION,
  SEP_GENERATION,
  SEP_RELATED_TASK_META,
  SEP_TASK_META,
  sepRelatedMeta,
  sepTaskMeta,
  SepMethod,
  type SepTaskMethod,
} from '../../protocol/index.js';
import { QuestionCarrier, uncarriedQuestions } from './QuestionCarrier.js';
import { sepStatus, toSepTask } from './sepWire.js';

/** What each task method does, for the error a failure maps to. */
const OPERATIONS: Record<SepTaskMethod, TaskOperation> = {
  [SepMethod.get]: 'retrieve',
  [SepMethod.result]: 'retrieve',
  [SepMethod.list]: 'list',
  [SepMethod.delete]: 'delete',
};

export interface SepOptions {
  /** Request types besides `tools/call` that may carry a task (the proposal names `resources/read`, `prompts/get`). */
  requests: ReadonlySet<string>;
}

/**
 * SEP-1686 as proposed (TASKS-SPEC §2): the requestor names the task in `_meta`, the original request still gets its
 * normal response, and the task is a side channel for polling and late retrieval — with retry-safe creation: a
 * second request with the same id learns that the task exists instead of starting the work twice.
 */
export class SepDialect implements ServerDialect {
  constructor(private readonly options: SepOptions) {}

  /** 2025-era requests that name a SEP-1686 task, and the proposal's task methods (docs/generations.md). */
  answererFor(request: JsonRpcRequest, session: SessionView): Answerer | undefined {
    if (session.modern) return undefined;
    if (this.answersRequest(request, session.caller, session.policyFor)) {
      return { operation: 'create', answer: (r, ctx) => this.createTask(r, ctx) };
    }
    if (!Object.hasOwn(OPERATIONS, request.method)) return undefined;
    if (request.method !== SepMethod.delete && !speaksSep1686(request, session)) return undefined;
    return { operation: OPERATIONS[request.method as SepTaskMethod], answer: (r, ctx) => this.tasksMethod(r, ctx) };
  }

  /**
   * Whether a request asks for a SEP-1686 task this receiver supports. Others are served normally with the task
   * `_meta` ignored (spec 4.1): request types not opted in, tools that do not run as tasks, and callers that cannot be
   * told apart (client-chosen ids need an owner to be scoped to).
   */
  answersRequest(request: JsonRpcRequest, caller: Caller, policyFor: DialectContext['policyFor']): boolean {
    const params = paramsOf(request);
    if (sepTaskMeta(params) === undefined || !caller.listable) return false;
    if (request.method === 'tools/call') {
      const name = params?.['name'];
      return typeof name === 'string' && (policyFor(name)?.taskSupport ?? 'forbidden') !== 'forbidden';
    }
    return this.options.requests.has(request.method);
  }

  /** Creates the task named by the request, announces it, and answers the request with its normal result. */
  async createTask(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const params = paramsOf(request) as Record<string, unknown>;
    const task = sepTaskMeta(params);
    if (
      !isObject(task) ||
      typeof task['taskId'] !== 'string' ||
      task['taskId'].length === 0 ||
      task['taskId'].length > 256
    ) {
      return answerError(
        ErrorCodes.INVALID_PARAMS,
        `Invalid params: _meta["${SEP_TASK_META}"].taskId must be a non-empty string`,
      );
    }
    const keepAlive = task['keepAlive'];
    if (
      keepAlive !== undefined &&
      keepAlive !== null &&
      (typeof keepAlive !== 'number' || !Number.isFinite(keepAlive) || keepAlive < 0)
    ) {
      return answerError(
        ErrorCodes.INVALID_PARAMS,
        `Invalid params: _meta["${SEP_TASK_META}"].keepAlive must be a non-negative number`,
      );
    }
    if (params['task'] !== undefined) {
      return answerError(
        ErrorCodes.INVALID_PARAMS,
        'Invalid params: a request asks for either a 2025-11-25 task (params.task) or a SEP-1686 task (_meta), not both',
      );
    }
    const clientTaskId = task['taskId'];
    const meta = params['_meta'] as Record<string, unknown>;
    const { [SEP_TASK_META]: _task, ...restMeta } = meta;
    const toolName = request.method === 'tools/call' ? (params['name'] as string) : undefined;
    const policy = toolName === undefined ? undefined : ctx.policyFor(toolName);
    const progressToken = restMeta['progressToken'];
    let record: TaskRecord;
    try {
      const created = await ctx.engine.create({
        ...ownedBy(ctx.caller),
        request: { method: request.method, params: { ...params, _meta: restMeta } },
        dialect: SEP_GENERATION,
        idempotencyKey: clientTaskId,
        // spec 4.5: keepAlive counts from the terminal status; the engine caps it.
        retention: {
          kind: 'keepAlive',
          keepAliveMs: keepAlive === undefined ? policy?.ttlMs : (keepAlive as number | null),
        },
        pollIntervalMs: policy?.pollIntervalMs ?? ctx.defaultPollIntervalMs,
        // spec 7.2: a tool result with isError still ends `completed`.
        toolErrorStatus: 'completed',
        retrySafe: toolName === undefined ? true : (policy?.retrySafe ?? false),
        ...((typeof progressToken === 'string' || typeof progressToken === 'number') && { progressToken }),
        meta: taskMetaFor(ctx, { toolName: toolName || undefined, clientCapabilities: ctx.clientCapabilities, policy }),
      });
      // spec 4.2, 7.1: an id already in use is refused, so a retry learns its task exists and polls it instead.
      if (!created.created) return taskIdExists(clientTaskId);
      record = created.task;
    } catch (error) {
      if (error instanceof TaskConflictError) return taskIdExists(clientTaskId);
      throw error;
    }
    // spec 3.4: announced once durable, before the response, on the request's own stream.
    await ctx.outbound.relatedNotification({
      jsonrpc: '2.0',
      method: SepMethod.created,
      params: { _meta: sepRelatedMeta(clientTaskId) },
    });
    return this.answerOriginal(record, clientTaskId, ctx);
  }

  /**
   * Holds the original request until the task ends, delivering its input requests meanwhile (spec 4.4, 4.7) and
   * marking the record while they are outstanding, so polls elsewhere leave them to this stream.
   */
  private async answerOriginal(created: TaskRecord, clientTaskId: string, ctx: DialectContext): Promise<DialectAnswer> {
    let record: TaskRecord | undefined = created;
    const delivered: string[] = [];
    const carrier = new QuestionCarrier(ctx.engine, created.taskId);
    try {
      while (record && !isTerminal(record.status)) {
        await deliverInputs(record, ctx, delivered, SEP_RELATED_TASK_META, clientTaskId);
        const renewInMs = await carrier.keep(record);
        record = await waitOrRenew(ctx, record, renewInMs);
      }
    } catch (error) {
      // spec 4.8: notifications/cancelled for the original request cancels the task (late ones are ignored); a
      // dropped connection does not — the task goes on and can be polled.
      if (ctx.signal.reason instanceof RequestCancelled) {
        await ctx.engine
          .cancel(ctx.caller.scope, created.taskId, 'The task was cancelled by request.')
          .catch((e: unknown) => {
            if (!(e instanceof TaskTerminalError)) throw e;
          });
      }
      if (ctx.signal.aborted) return { noResponse: true };
      throw error;
    } finally {
      for (const entry of delivered) ctx.inFlightInputs.delete(entry);
      // A failed release only delays the poll's delivery until the mark lapses.
      if (record && !isTerminal(record.status)) await carrier.release().catch(() => undefined);
    }
    if (!record) return answerError(ErrorCodes.INTERNAL_ERROR, 'The task was deleted before it finished');
    // The outcome reaches its requestor: the task may make room at a stored-task bound.
    void ctx.engine.resultDelivered(record);
    if (record.outcome?.kind === 'error') return { error: record.outcome.error };
    if (record.outcome?.kind === 'result') return { result: withRelated(record.outcome.result, clientTaskId) };
    return answerError(ErrorCodes.INTERNAL_ERROR, `The task ended ${record.status} without a result`);
  }

  /** Answers `tasks/get`, `tasks/result`, `tasks/list` or `tasks/delete` in the proposal's terms. */
  private async tasksMethod(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const params = paramsOf(request);
    if (!params) throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: params must be an object');
    if (request.method === SepMethod.list) return this.list(params, ctx);
    const clientTaskId = requireTaskId(params);
    // Client-chosen ids are guessable: they are only ever resolved within the caller's own tasks.
    const record = await ctx.engine.getByIdempotencyKey(ctx.caller.owner, clientTaskId);
    const related = { _meta: sepRelatedMeta(clientTaskId) };
    switch (request.method as Exclude<SepTaskMethod, typeof SepMethod.list>) {
      case SepMethod.get: {
        ctx.advertisePollInterval(record.pollIntervalMs);
        // spec 4.4: the proposal names no other stream for questions. Those no live original request carries (its
        // server was killed or restarted, or its requestor let it go) ride on this poll's stream instead, each once
        // per connection, and their responses answer them as on the original request's.
        releaseAnswered(record, ctx.inFlightInputs);
        const uncarried = uncarriedQuestions(record, ctx.engine.clock.now());
        if (uncarried.size > 0) await deliverInputs(record, ctx, [], SEP_RELATED_TASK_META, clientTaskId, uncarried);
        // The proposal's task has no statusMessage: the progress (and its message) ride in `_meta`.
        return { result: { ...toSepTask(record), ...withProgressMeta(record, related._meta) } };
      }
      case SepMethod.result:
        // spec 4.6, 7.1: results exist only for completed tasks.
        if (record.status !== 'completed' || record.outcome?.kind !== 'result') {
          return answerError(
            ErrorCodes.INVALID_PARAMS,
            `Cannot retrieve result: Task status is '${sepStatus(record)}', not 'completed'`,
          );
        }
        void ctx.engine.resultDelivered(record);
        return { result: withRelated(record.outcome.result, clientTaskId) };
      case SepMethod.delete:
        // spec 4.10: accepted for terminal tasks; running work is not deleted behind its requestor's back.
        if (!isTerminal(record.status)) {
          return answerError(
            ErrorCodes.INVALID_PARAMS,
            `Cannot delete task: Task status is '${sepStatus(record)}'; cancel it first (notifications/cancelled) or wait for it to finish`,
          );
        }
        await ctx.engine.delete(ctx.caller.owner, record.taskId);
        return { result: related };
    }
  }

  private async list(params: Record<string, unknown>, ctx: DialectContext): Promise<DialectAnswer> {
    // spec 4.9: every task the caller can get is listed.
    return listPage(params, ctx, toSepTask);
  }
}

/**
 * SEP-1686 task requests carry its related-task key (spec 4.7); on a connection that negotiated a protocol older
 * than 2025-11-25, where core tasks do not exist, every task request is SEP-1686.
 */
function speaksSep1686(request: JsonRpcRequest, session: SessionView): boolean {
  if (carriesSepRelatedTask(isObject(request.params) ? request.params : undefined)) return true;
  return session.negotiatedVersion !== undefined && session.negotiatedVersion < CORE_PROTOCOL_VERSION;
}

/**
 * Waits for the task to change; with `renewInMs`, for at most that long, returning `record` unchanged when the time
 * is up, so the holder can renew its mark.
 */
async function waitOrRenew(
  ctx: DialectContext,
  record: TaskRecord,
  renewInMs: number | undefined,
): Promise<TaskRecord | undefined> {
  if (renewInMs === undefined) return ctx.engine.waitForChange(record.taskId, record.version, ctx.signal);
  const due = AbortSignal.timeout(Math.max(1, Math.ceil(renewInMs)));
  try {
    return await ctx.engine.waitForChange(record.taskId, record.version, AbortSignal.any([ctx.signal, due]));
  } catch (error) {
    if (due.aborted && !ctx.signal.aborted) return record;
    throw error;
  }
}

/** Forgets the questions of `record` a poll carried once they are no longer outstanding (bounds the set). */
function releaseAnswered(record: TaskRecord, inFlight: Set<string>): void {
  const prefix = `${record.taskId}:`;
  const open = new Set(outstandingInputs(record).map(([key]) => key));
  for (const entry of inFlight) {
    if (entry.startsWith(prefix) && !open.has(entry.slice(prefix.length))) inFlight.delete(entry);
  }
}

function taskIdExists(taskId: string): DialectAnswer {
  return answerError(ErrorCodes.INVALID_PARAMS, `Task ID already exists: ${taskId}`);
}

/** spec 4.7: responses related to a task carry its id. */
function withRelated(result: Record<string, unknown>, taskId: string): Record<string, unknown> {
  const meta = isObject(result['_meta']) ? result['_meta'] : {};
  return { ...result, _meta: { ...meta, ...sepRelatedMeta(taskId) } };
}
