import type { EngineLogger, TaskEngine, TaskOutcome, TaskRecord, TaskWork } from '../engine/index.js';
import { throttledStatus, type TaskWorkHooks } from '../server/index.js';
import { forwardToolCall, type UpstreamTaskRef } from './forwardToolCall.js';
import type { ToolPolicies } from './toolPolicies.js';
import type { UpstreamPool } from './UpstreamPool.js';
import { proxyEventSink } from './proxyEventSink.js';
import { ErrorCodes, EventSourceSchema, isObject } from '../protocol/index.js';

/** Where a proxy task keeps the upstream's own task it follows. */
export const UPSTREAM_TASK_META = 'upstreamTask';

/** The upstream task a proxy task was following when its process stopped. */
export function upstreamTaskOf(task: TaskRecord): UpstreamTaskRef | undefined {
  const ref = task.meta[UPSTREAM_TASK_META];
  if (!isObject(ref) || typeof ref['taskId'] !== 'string') return undefined;
  const source = EventSourceSchema.safeParse(ref['eventSource']);
  return {
    taskId: ref['taskId'],
    ...(typeof ref['sessionId'] === 'string' && { sessionId: ref['sessionId'] }),
    ...(source.success && {
      eventSource: {
        name: source.data.name,
        input: source.data.input,
        ...(source.data.initialCursor !== undefined && { initialCursor: source.data.initialCursor }),
      },
    }),
  };
}

/**
 * The work of a proxy task: the original `tools/call` forwarded to the upstream. Upstream progress reaches the
 * requestor and becomes the statusMessage, upstream questions become the task's input requests, and an upstream task
 * is remembered on the task (durably, before it is followed) so a restarted proxy follows it instead of calling
 * again. The upstream task's events (its event source, of the types the proxy passes through) are re-emitted into
 * this task's own log, in order, each once, before the task ends (docs/proxy.md, "Events").
 */
export function createProxyWork(
  upstreams: UpstreamPool,
  policies: ToolPolicies,
  engine: TaskEngine,
  hooks: TaskWorkHooks,
  logger: EngineLogger = { info() {}, warn() {}, error() {} },
): TaskWork {
  const passed: ReadonlySet<string> = new Set(upstreams.eventTypes.map((type) => type.name));
  return async (context): Promise<TaskOutcome> => {
    const task = context.task;
    const params = task.request.params;
    if (task.request.method !== 'tools/call' || typeof params['name'] !== 'string') {
      return {
        kind: 'error',
        error: { code: ErrorCodes.METHOD_NOT_FOUND, message: `The proxy runs only tools/call as a task` },
      };
    }
    const name = params['name'];
    const resume = upstreamTaskOf(task);
    // The owner's own connection: the upstream's questions during this run reach only this task's requestor.
    const lease = await upstreams.acquire(task.owner);
    const status = throttledStatus(context);
    try {
      return await forwardToolCall(
        lease.upstream,
        { name, ...(isObject(params['arguments']) && { arguments: params['arguments'] }) },
        {
          signal: context.signal,
          settings: policies.settingsFor(name),
          gate: upstreams.gate,
          asTask: true,
          requestInput: (request) => context.requestInput(request),
          onProgress: (progress) => {
            if (context.signal.aborted) return;
            // spec R55: the requestor's own token, for the task's life.
            if (task.progressToken !== undefined)
              hooks.onProgress?.(task, { progressToken: task.progressToken, ...progress });
            status.write(progress.message ?? progressText(progress));
          },
          onStatus: (message) => status.write(message),
          ...(resume && { resume }),
          onUpstreamTask: (ref) => {
            // The upstream named this tool's event source: the proxy's next tasks of the tool name it too (TS6).
            if (ref.eventSource && passed.has(ref.eventSource.name))
              upstreams.learnedSources.set(name, ref.eventSource.name);
            return engine.annotate(task.taskId, { [UPSTREAM_TASK_META]: ref });
          },
          ...(passed.size > 0 && { events: proxyEventSink(engine, task, passed, logger) }),
        },
      );
    } finally {
      lease.release();
      status.stop();
    }
  };
}

/** A statusMessage for progress that carries no message of its own: `3/10`, or just the count. */
function progressText(progress: { progress: number; total?: number }): string {
  return progress.total === undefined ? String(progress.progress) : `${progress.progress}/${progress.total}`;
}
