import {
  TaskConnectionError,
  TaskNotFoundError,
  TaskRpcError,
  type TaskClient,
  type TaskHandle,
  type TaskOutcome as ClientOutcome,
} from '../client/index.js';
import type { RpcError } from './passthrough.js';
import type { ProxyToolSettings } from './toolPolicies.js';
import type { InputAnswer, InputRequest } from './InputRoute.js';
import type { Upstream } from './Upstream.js';
import type { ConcurrencyGate } from './ConcurrencyGate.js';
import { traceMeta } from './traceMeta.js';
import { followUpstreamEvents, type UpstreamEventSink } from './followUpstreamEvents.js';
import { withDeadline } from '../engine/index.js';
import { ErrorCodes, type EventSource } from '../protocol/index.js';

export type CallOutcome = { kind: 'result'; result: Record<string, unknown> } | { kind: 'error'; error: RpcError };

/** The upstream's own task a call follows, kept on the proxy's task so a restarted proxy follows it again. */
export interface UpstreamTaskRef {
  taskId: string;
  /** The upstream's HTTP session, for upstreams whose tasks belong to the session that created them. */
  sessionId?: string;
  /** The upstream task's event source, followed again after a restart (a handle attached by id has none). */
  eventSource?: EventSource;
}

export interface ForwardHooks {
  signal: AbortSignal;
  settings: ProxyToolSettings;
  /** Where the tool's `concurrency` is counted: one gate for the whole upstream, whichever connection calls it. */
  gate: ConcurrencyGate;
  /** Run as the upstream's own task where the upstream tool allows it (the proxy's tasks do). */
  asTask: boolean;
  requestInput?(request: InputRequest): Promise<InputAnswer>;
  onProgress?(progress: { progress: number; total?: number; message?: string }): void;
  /** A status message of the upstream's own task. */
  onStatus?(message: string): void;
  /** The upstream task this call followed before a restart of the proxy. */
  resume?: UpstreamTaskRef;
  /** Called once the upstream accepted its own task, before it is followed. */
  onUpstreamTask?(ref: UpstreamTaskRef): Promise<void>;
  /** Where the events of the upstream task's event source go, when it names one (the proxy task's log). */
  events?: UpstreamEventSink;
}

/** Runs of a retry-safe call lost to an upstream crash before it gives up. */
const MAX_RUNS = 3;

/**
 * One `tools/call` forwarded to the upstream: plainly, or as the upstream's own task where its tool declares task
 * support (then followed to its end, with its input requests, status and cancellation carried across). A call cut
 * off by an upstream crash is run again when the tool is retry-safe, and fails with a clear message otherwise.
 */
export async function forwardToolCall(
  upstream: Upstream,
  params: { name: string; arguments?: Record<string, unknown> },
  hooks: ForwardHooks,
): Promise<CallOutcome> {
  const deadline =
    hooks.settings.timeoutMs === undefined ? undefined : withDeadline(hooks.signal, hooks.settings.timeoutMs);
  const signal = deadline?.signal ?? hooks.signal;
  let release: (() => void) | undefined;
  try {
    release = await hooks.gate.enter(params.name, hooks.settings.concurrency, signal);
    for (let run = 1; ; run++) {
      try {
        return await forwardOnce(upstream, params, { ...hooks, signal });
      } catch (error) {
        if (hooks.signal.aborted) throw error;
        if (signal.aborted) {
          throw new Error(`The upstream call of ${params.name} did not finish within ${hooks.settings.timeoutMs} ms`);
        }
        if (!(error instanceof TaskConnectionError)) throw error;
        if (hooks.settings.retrySafe !== true || run >= MAX_RUNS || hooks.resume) {
          throw new Error(
            hooks.settings.retrySafe === true
              ? `${error.message}; gave up after ${run} runs`
              : `${error.message}; the call was not run again because ${params.name} is not marked retry-safe`,
          );
        }
        // Wait for the restarted upstream (stdio) or try the HTTP upstream again.
        await upstream.current().catch(() => new Promise((resolve) => setTimeout(resolve, 1000)));
      }
    }
  } finally {
    release?.();
    deadline?.clear();
  }
}

async function forwardOnce(
  upstream: Upstream,
  params: { name: string; arguments?: Record<string, unknown> },
  hooks: ForwardHooks,
): Promise<CallOutcome> {
  if (hooks.resume) return followUpstreamTask(upstream, params, hooks, hooks.resume);
  const support = (await upstream.tool(params.name))?.execution?.taskSupport;
  // The 2026 extension has no per-tool declaration: the server decides per call, so every call may become one.
  // SEP-1686 has none either: the requestor asks, so a task of the proxy asks the upstream for one.
  if (
    support === 'required' ||
    ((support === 'optional' || upstream.requestorChosenTasks) && hooks.asTask) ||
    (await upstream.serverDirectedTasks())
  ) {
    return followUpstreamTask(upstream, params, hooks, undefined);
  }
  const route = { requestInput: (request: InputRequest) => answerInput(hooks, request) };
  const unregister = upstream.routes.register(route);
  try {
    const meta = traceMeta();
    const sent = meta ? { ...params, _meta: meta } : params;
    const result = await upstream.request('tools/call', sent, {
      signal: hooks.signal,
      route,
      ...(hooks.onProgress && { onProgress: hooks.onProgress }),
    });
    return { kind: 'result', result };
  } catch (error) {
    if (error instanceof TaskRpcError) return { kind: 'error', error: error.error };
    throw error;
  } finally {
    unregister();
  }
}

function answerInput(hooks: ForwardHooks, request: InputRequest): Promise<InputAnswer> {
  if (hooks.requestInput) return hooks.requestInput(request);
  return Promise.resolve(
    request.method === 'elicitation/create'
      ? { result: { action: 'decline' } }
      : { error: { code: ErrorCodes.METHOD_NOT_FOUND, message: `This client cannot answer ${request.method}` } },
  );
}

/** The upstream's own task: created (or found again after a restart), followed to its end, cancelled with ours. */
async function followUpstreamTask(
  upstream: Upstream,
  params: { name: string; arguments?: Record<string, unknown> },
  hooks: ForwardHooks,
  resume: UpstreamTaskRef | undefined,
): Promise<CallOutcome> {
  const session = await upstream.onSession(resume?.sessionId);
  const meta = traceMeta();
  let handle: TaskHandle;
  try {
    handle = resume
      ? await session.client.attach(resume.taskId, { follow: false })
      : await session.client.callTool(params.name, params.arguments ?? {}, {
          mode: 'task',
          follow: false,
          ...(meta && { meta }),
        });
  } catch (error) {
    session.release();
    if (resume && error instanceof TaskNotFoundError)
      throw new Error(`The upstream server no longer knows its task ${resume.taskId}`);
    if (error instanceof TaskRpcError) return { kind: 'error', error: error.error };
    throw error;
  }
  const taskId = handle.taskId;
  const unregister = upstream.routes.register({
    ...(taskId !== undefined && { upstreamTaskId: taskId }),
    requestInput: (request) => answerInput(hooks, request),
  });
  const onAbort = () => void handle.cancel().catch(() => {});
  let lastStatus: string | undefined;
  const stopWatching = handle.onUpdate((snapshot) => {
    if (snapshot.statusMessage !== undefined && snapshot.statusMessage !== lastStatus) {
      lastStatus = snapshot.statusMessage;
      hooks.onStatus?.(snapshot.statusMessage);
    }
  });
  const source = handle.eventSource ?? resume?.eventSource;
  const stopEvents = new AbortController();
  try {
    if (!resume && taskId !== undefined)
      await hooks.onUpstreamTask?.({ ...sessionRef(session.client, taskId), ...(source && { eventSource: source }) });
    if (hooks.signal.aborted) onAbort();
    else hooks.signal.addEventListener('abort', onAbort, { once: true });
    const outcome = handle.outcome();
    const events = AbortSignal.any([hooks.signal, stopEvents.signal]);
    const following =
      source && hooks.events ? followUpstreamEvents(session.client, source, hooks.events, outcome, events) : undefined;
    const settled = await outcome;
    // The task ends after the upstream's events from before its end are in its log.
    await following;
    return toCallOutcome(settled, hooks.signal);
  } finally {
    stopEvents.abort();
    hooks.signal.removeEventListener('abort', onAbort);
    stopWatching();
    unregister();
    session.release();
  }
}

function sessionRef(client: TaskClient, taskId: string): UpstreamTaskRef {
  // Only 2025-era HTTP sessions bind tasks; the 2026 wire has none.
  const sessionId = client.protocolEra === 'legacy' ? client.sessionId : undefined;
  return { taskId, ...(sessionId !== undefined && { sessionId }) };
}

function toCallOutcome(outcome: ClientOutcome, signal: AbortSignal): CallOutcome {
  switch (outcome.status) {
    case 'completed':
      return { kind: 'result', result: outcome.result as Record<string, unknown> };
    case 'failed':
      if (outcome.result) return { kind: 'result', result: outcome.result as Record<string, unknown> };
      return { kind: 'error', error: outcome.error ?? { code: ErrorCodes.INTERNAL_ERROR, message: outcome.message } };
    case 'cancelled':
      if (signal.aborted) return { kind: 'error', error: { code: ErrorCodes.INTERNAL_ERROR, message: 'Cancelled' } };
      return {
        kind: 'error',
        error: {
          code: ErrorCodes.INTERNAL_ERROR,
          message: outcome.message ?? 'The upstream server cancelled its task',
        },
      };
  }
}
