import { isTerminal, withDeadline, type TaskRecord } from '../../engine/index.js';
import {
  deliverInputs,
  type Answerer,
  type CoreDialect,
  type Decoration,
  type DialectAnswer,
  type DialectContext,
  type ServerDialect,
  type SessionView,
} from '../../dialects/index.js';
import { carriesSepRelatedTask, declaresTasksExtension, RELATED_TASK_META } from '../../protocol/index.js';
import { during, ErrorCodes, isObject, type JsonRpcRequest } from '../../rpc/index.js';

export interface FallbackToolsOptions {
  /** How long a plain call runs synchronously before it answers with the task to follow. Default 20 s. */
  afterMs?: number;
}

/** What the requestor can do, as far as the fallback tools care. */
export interface FallbackClient {
  /** It declared elicitation on a connection that can carry server requests. */
  canElicit: boolean;
}

export const FALLBACK_TOOL_NAMES = ['task_status', 'task_result', 'task_cancel', 'task_list', 'task_answer'] as const;
const NAMES: ReadonlySet<string> = new Set(FALLBACK_TOOL_NAMES);
const TASK_ID = { taskId: { type: 'string', description: 'The task id a previous call returned' } };
/** The most a `task_result` call waits, whatever it asks for. */
const MAX_WAIT_MS = 60_000;

const DEFINITIONS = {
  task_status: {
    description: 'Shows the status of a long-running task started by an earlier tool call (and any question it asks).',
    inputSchema: { type: 'object', properties: TASK_ID, required: ['taskId'] },
  },
  task_result: {
    description:
      "Returns a task's result once it is done; otherwise waits up to waitMs (default 0, at most 60000) and reports its status.",
    inputSchema: {
      type: 'object',
      properties: { ...TASK_ID, waitMs: { type: 'number', description: 'How long to wait for the result, in ms' } },
      required: ['taskId'],
    },
  },
  task_cancel: {
    description: 'Cancels a long-running task.',
    inputSchema: { type: 'object', properties: TASK_ID, required: ['taskId'] },
  },
  task_list: {
    description: 'Lists your recent tasks with their status.',
    inputSchema: { type: 'object', properties: {} },
  },
  task_answer: {
    description: 'Answers the question a task asks (see task_status).',
    inputSchema: {
      type: 'object',
      properties: {
        ...TASK_ID,
        answer: { description: 'The answer: a value, or an object with one entry per field asked for' },
      },
      required: ['taskId', 'answer'],
    },
  },
} as const;

type Text = { type: 'text'; text: string };
const text = (value: string): Text => ({ type: 'text', text: value });

/**
 * Tasks for hosts that do not speak them: a plain call of a task-capable tool runs for up to `afterMs`, then answers
 * with the task to follow; the `task_*` tools follow, answer and cancel it. Ownership is exactly that of `tasks/*`:
 * every read goes through the caller's scope, so another caller's task is a task that does not exist.
 */
export class FallbackTools implements ServerDialect {
  readonly afterMs: number;

  constructor(
    private readonly core: CoreDialect,
    options: FallbackToolsOptions = {},
  ) {
    this.afterMs = options.afterMs ?? 20_000;
  }

  /** Calls of task-capable tools and of the `task_*` tools, from a requestor that declared no tasks support. */
  answererFor(request: JsonRpcRequest, session: SessionView): Answerer | undefined {
    if (request.method !== 'tools/call' || carriesSepRelatedTask(request.params)) return undefined;
    const client = fallbackClient(request, session);
    if (!client || !this.answers(request, session.policyFor)) return undefined;
    const name = (request.params as Record<string, unknown>)['name'];
    return {
      operation: name === 'task_cancel' ? 'cancel' : 'retrieve',
      answer: (r, ctx) => this.handle(r, ctx, client),
    };
  }

  /** Such a requestor's `tools/list` ends with the `task_*` tools. */
  decorate(request: JsonRpcRequest, session: SessionView): Decoration | undefined {
    if (request.method !== 'tools/list') return undefined;
    const client = fallbackClient(request, session);
    return client && ((result) => withFallbackTools(result, this, client));
  }

  /** The tools added to `tools/list` for such a client (`task_answer` only where questions cannot be asked). */
  tools(client: FallbackClient): Array<Record<string, unknown>> {
    return FALLBACK_TOOL_NAMES.filter((name) => name !== 'task_answer' || !client.canElicit).map((name) => ({
      name,
      ...DEFINITIONS[name],
    }));
  }

  answers(request: JsonRpcRequest, policyFor: DialectContext['policyFor']): boolean {
    const name = isObject(request.params) ? request.params['name'] : undefined;
    if (request.method !== 'tools/call' || typeof name !== 'string') return false;
    return NAMES.has(name) || (policyFor(name)?.taskSupport ?? 'forbidden') !== 'forbidden';
  }

  async handle(request: JsonRpcRequest, ctx: DialectContext, client: FallbackClient): Promise<DialectAnswer> {
    const params = request.params as Record<string, unknown>;
    const name = params['name'] as string;
    const args = isObject(params['arguments']) ? params['arguments'] : {};
    if (!NAMES.has(name)) return this.start(request, ctx, client);
    if (name === 'task_list') return this.list(ctx);
    const taskId = args['taskId'];
    if (typeof taskId !== 'string' || taskId.length === 0)
      return { error: { code: ErrorCodes.INVALID_PARAMS, message: `Invalid params: ${name} needs a taskId` } };
    switch (name) {
      case 'task_status': {
        const record = await ctx.engine.get(ctx.caller.scope, taskId);
        return { result: this.pending(record, client, ownsTask(record, ctx)) };
      }
      case 'task_result': {
        const waitMs = typeof args['waitMs'] === 'number' ? Math.max(0, Math.min(args['waitMs'], MAX_WAIT_MS)) : 0;
        return this.follow(taskId, ctx, client, waitMs);
      }
      case 'task_cancel': {
        const record = await ctx.engine.cancel(ctx.caller.scope, taskId);
        return {
          result: { content: [text(`Task ${taskId} is ${record.status}.`)], structuredContent: summary(record) },
        };
      }
      default:
        return this.answer(taskId, args['answer'], ctx);
    }
  }

  /** The plain call becomes a task; the call waits `afterMs` for it before answering with the task to follow. */
  private async start(request: JsonRpcRequest, ctx: DialectContext, client: FallbackClient): Promise<DialectAnswer> {
    const created = await during(
      'create',
      this.core.toolsCall({ ...request, params: { ...(request.params as Record<string, unknown>), task: {} } }, ctx),
    );
    if (!('result' in created)) return created;
    const taskId = (created.result['task'] as { taskId: string }).taskId;
    const answer = await this.follow(taskId, ctx, client, this.afterMs);
    // The original call reports the tool's JSON-RPC error as such; task_result has only a tool result to give.
    return answer;
  }

  /** Waits up to `waitMs` for the task to end, asking its questions meanwhile where the client can be asked. */
  private async follow(
    taskId: string,
    ctx: DialectContext,
    client: FallbackClient,
    waitMs: number,
  ): Promise<DialectAnswer> {
    let record = await ctx.engine.get(ctx.caller.scope, taskId);
    const delivered: string[] = [];
    const deadline = withDeadline(ctx.signal, waitMs);
    try {
      while (!isTerminal(record.status) && !deadline.signal.aborted) {
        if (client.canElicit && ownsTask(record, ctx)) await deliverInputs(record, ctx, delivered, RELATED_TASK_META);
        const next = await ctx.engine.waitForChange(taskId, record.version, deadline.signal).catch(() => undefined);
        record = next ?? (await ctx.engine.get(ctx.caller.scope, taskId));
      }
    } finally {
      deadline.clear();
      for (const entry of delivered) ctx.inFlightInputs.delete(entry);
    }
    if (!isTerminal(record.status)) return { result: this.pending(record, client, ownsTask(record, ctx)) };
    // The outcome reaches its requestor: the task may make room at a stored-task bound.
    void ctx.engine.resultDelivered(record);
    const outcome = record.outcome;
    if (outcome?.kind === 'result') return { result: outcome.result };
    const message = outcome?.kind === 'error' ? outcome.error.message : (record.statusMessage ?? record.status);
    return { result: { content: [text(`Task ${taskId} ${record.status}: ${message}`)], isError: true } };
  }

  /**
   * A task that has not ended yet, in one line for the model and structured for the host; its question only for the
   * caller that may answer it (`asker`).
   */
  private pending(record: TaskRecord, client: FallbackClient, asker: boolean): Record<string, unknown> {
    const question = client.canElicit || !asker ? undefined : firstQuestion(record);
    if (isTerminal(record.status)) {
      return {
        content: [text(`Task ${record.taskId} is ${record.status}; task_result gives its result.`)],
        structuredContent: summary(record),
      };
    }
    const lines = [
      `The work continues as task ${record.taskId} (${record.status}${record.statusMessage ? `: ${record.statusMessage}` : ''}). ` +
        `Call task_result with {"taskId":"${record.taskId}","waitMs":30000} for its result, task_status to check on it, or task_cancel to stop it.`,
    ];
    if (question)
      lines.push(`It asks: ${question.message} Answer with task_answer {"taskId":"${record.taskId}","answer":…}.`);
    return {
      content: [text(lines.join('\n'))],
      structuredContent: { ...summary(record), ...(question && { question }) },
    };
  }

  /**
   * The first outstanding question gets `answer`. Only the task's owner may answer this way, whose key it does not
   * need: to anyone else, even where the id alone reaches the task, the task is missing (docs/limits.md: knowing a
   * task id is not enough to answer its questions).
   */
  private async answer(taskId: string, answer: unknown, ctx: DialectContext): Promise<DialectAnswer> {
    const record = await ctx.engine.get(ctx.caller.owner, taskId);
    const entry = Object.entries(record.inputRequests)[0];
    if (!entry)
      return { error: { code: ErrorCodes.INVALID_PARAMS, message: `Task ${taskId} is not waiting for an answer` } };
    const [key, pending] = entry;
    const result =
      pending.method === 'elicitation/create'
        ? { action: 'accept', content: elicitedContent(pending.params, answer) }
        : {
            role: 'assistant',
            content: text(typeof answer === 'string' ? answer : JSON.stringify(answer)),
            model: 'host',
          };
    await ctx.engine.answerInput(ctx.caller.owner, taskId, { [key]: { result } });
    return { result: { content: [text(`Answered; task ${taskId} goes on.`)], structuredContent: { taskId } } };
  }

  private async list(ctx: DialectContext): Promise<DialectAnswer> {
    // spec R66: nothing is listed where callers cannot be told apart.
    if (!ctx.caller.listable) {
      return {
        result: { content: [text('Tasks cannot be listed on this connection: it has no identity.')], isError: true },
      };
    }
    const page = await ctx.engine.list(ctx.caller.owner, { limit: 50 });
    const tasks = page.tasks.map(summary);
    const lines = tasks.map(
      (task) => `${task.taskId} ${task.status}${task.statusMessage ? `: ${task.statusMessage}` : ''}`,
    );
    return {
      result: { content: [text(lines.length > 0 ? lines.join('\n') : 'No tasks.')], structuredContent: { tasks } },
    };
  }
}

/**
 * Whether the caller owns the task (its principal, session or anonymous client), not merely reaches it by its id:
 * only the owner is asked a task's questions and may answer them by the fallback tools, which need no input key.
 */
function ownsTask(record: TaskRecord, ctx: DialectContext): boolean {
  return record.owner === ctx.caller.owner;
}

function summary(record: TaskRecord): {
  taskId: string;
  status: string;
  statusMessage?: string;
  pollAfterMs: number;
} {
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    pollAfterMs: record.pollIntervalMs ?? 1000,
  };
}

function firstQuestion(record: TaskRecord): { message: string; requestedSchema?: unknown } | undefined {
  const pending = Object.values(record.inputRequests)[0];
  if (!pending) return undefined;
  const params = pending.params ?? {};
  const message = typeof params['message'] === 'string' ? params['message'] : `The task needs ${pending.method}.`;
  return { message, ...(params['requestedSchema'] !== undefined && { requestedSchema: params['requestedSchema'] }) };
}

/** An answer for an elicitation: an object as it is, a single value for the one field asked for. */
function elicitedContent(params: Record<string, unknown> | undefined, answer: unknown): unknown {
  if (isObject(answer)) return answer;
  const schema = isObject(params?.['requestedSchema']) ? params['requestedSchema'] : {};
  const fields = isObject(schema['properties']) ? Object.keys(schema['properties']) : [];
  return fields.length === 1 ? { [fields[0] as string]: answer } : { answer };
}

/** A requestor without tasks support: what it can do. Undefined for one that speaks tasks. */
function fallbackClient(request: JsonRpcRequest, session: SessionView): FallbackClient | undefined {
  const params = isObject(request.params) ? request.params : undefined;
  if (session.modern) return declaresTasksExtension(params) ? undefined : { canElicit: false };
  const capabilities = session.clientCapabilities;
  if (isObject(capabilities?.['tasks']) || params?.['task'] !== undefined) return undefined;
  return { canElicit: session.longLived && isObject(capabilities?.['elicitation']) };
}

/** A `tools/list` result with the fallback tools after the requestor's own, on its last page. */
export function withFallbackTools(
  result: Record<string, unknown>,
  fallback: FallbackTools,
  client: FallbackClient,
): Record<string, unknown> {
  if (result['nextCursor'] !== undefined || !Array.isArray(result['tools'])) return result;
  return { ...result, tools: [...(result['tools'] as unknown[]), ...fallback.tools(client)] };
}
