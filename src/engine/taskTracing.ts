import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Span } from '@opentelemetry/api';

import type { TaskRecord } from './TaskRecord.js';

/**
 * OpenTelemetry spans of a task, through `@opentelemetry/api` only: without a registered SDK every call is a no-op.
 * A span cannot outlive the process that started it, and a task outlives processes, so a task is traced as an
 * instantaneous `mcp.task` span at its creation (a child of the creating request) and one `mcp.task.run` span per run
 * attempt, each a child of the creation span, in whichever process runs it. The creation span's W3C context is kept
 * in the record's `meta` (persisted by every store), which is how a worker finds the parent.
 */
const TRACER = 'mcp-tasks';

/** The key in TaskRecord.meta holding the creation span's W3C trace context (`traceparent`, `tracestate`). */
export const TRACE_CONTEXT_META = 'traceContext';

/** Attributes of the OpenTelemetry semantic conventions for MCP, plus the task's own. */
function taskAttributes(task: TaskRecord): Record<string, string | number> {
  const attributes: Record<string, string | number> = {
    'mcp.task.id': task.taskId,
    'mcp.method.name': task.request.method,
  };
  const tool = task.meta['toolName'] ?? task.request.params['name'];
  if (typeof tool === 'string') attributes['gen_ai.tool.name'] = tool;
  const session = task.meta['sessionId'];
  if (typeof session === 'string') attributes['mcp.session.id'] = session;
  return attributes;
}

/** Records the creation span under the active context (the creating request's) and stores its context on the record. */
export function traceTaskCreation(record: TaskRecord): void {
  const tracer = trace.getTracer(TRACER);
  const attributes: Record<string, string | number> = { ...taskAttributes(record), 'mcp.task.status': record.status };
  const tool = attributes['gen_ai.tool.name'];
  const span = tracer.startSpan(`mcp.task${tool === undefined ? '' : ` ${tool}`}`, {
    attributes,
    startTime: record.createdAt,
  });
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  // Nothing is stored when no SDK (no propagator) is registered.
  if (carrier['traceparent'] !== undefined) record.meta[TRACE_CONTEXT_META] = carrier;
  span.end();
}

/** A run attempt's span, a child of the task's creation span; the work runs inside its context. */
export class RunSpan {
  private readonly span: Span;

  constructor(task: TaskRecord, runnerId: string) {
    const stored = task.meta[TRACE_CONTEXT_META];
    const parent =
      stored !== null && typeof stored === 'object'
        ? propagation.extract(ROOT_CONTEXT, stored as Record<string, string>)
        : context.active();
    this.span = trace
      .getTracer(TRACER)
      .startSpan(
        'mcp.task.run',
        { attributes: { ...taskAttributes(task), 'mcp.task.attempt': task.attempts, 'mcp.task.runner': runnerId } },
        parent,
      );
  }

  within<T>(fn: () => Promise<T>): Promise<T> {
    return context.with(trace.setSpan(context.active(), this.span), fn);
  }

  /** Ends the attempt: how it ended (finished, suspended, failed, aborted, interrupted) and the error, if any. */
  end(outcome: string, error?: string): void {
    this.span.setAttribute('mcp.task.run.outcome', outcome);
    if (error !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.span.end();
  }
}
