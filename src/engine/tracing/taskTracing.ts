import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Span } from '@opentelemetry/api';

import type { TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';

/**
 * OpenTelemetry spans of a task, through `@opentelemetry/api` only: without a registered SDK every call is a no-op.
 * The task span (`mcp.task`, TaskSpans) runs from creation to the terminal status; its W3C context is kept in the
 * record's `meta` (persisted by every store), which is how a run in any process finds its parent: one `mcp.task.run`
 * span per run attempt, with the workflow's `mcp.task.step` spans under it.
 */
export const TRACER = 'mcp-tasks';

/** The key in TaskRecord.meta holding the task span's W3C trace context (`traceparent`, `tracestate`, `holder`). */
export const TRACE_CONTEXT_META = 'traceContext';

/** Attributes of the OpenTelemetry semantic conventions for MCP, plus the task's own. */
export function taskAttributes(task: TaskRecord): Record<string, string | number> {
  const attributes: Record<string, string | number> = {
    'mcp.task.id': task.taskId,
    'mcp.method.name': task.request.method,
  };
  // Named by the request itself: the engine reads none of the keys the server keeps in `meta`.
  const tool = task.request.params['name'];
  if (typeof tool === 'string') attributes['gen_ai.tool.name'] = tool;
  return attributes;
}

/** The W3C context stored on a task (and the id of the process holding its span, if one does). */
export function storedTraceContext(record: TaskRecord): Record<string, string> | undefined {
  const stored = record.meta[TRACE_CONTEXT_META];
  if (stored === null || typeof stored !== 'object') return undefined;
  const carrier = stored as Record<string, unknown>;
  return typeof carrier['traceparent'] === 'string' ? (carrier as Record<string, string>) : undefined;
}

/**
 * The record without `holder` as the holder of its task span (TaskSpans), or null for no change: the holder let the
 * span go, or died with the task's lease. Its settler then emits the task's end span.
 */
export function releaseSpanHolder(record: TaskRecord, holder: string | undefined): TaskRecord | null {
  const stored = storedTraceContext(record);
  if (isTerminal(record.status) || holder === undefined || stored?.['holder'] !== holder) return null;
  const { holder: _released, ...carrier } = stored;
  return { ...record, meta: { ...record.meta, [TRACE_CONTEXT_META]: carrier } };
}

/** A run attempt's span, a child of the task span; the work runs inside its context. */
export class RunSpan {
  private readonly span: Span;

  constructor(task: TaskRecord, runnerId: string) {
    const stored = storedTraceContext(task);
    const parent = stored ? propagation.extract(ROOT_CONTEXT, stored) : context.active();
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

/**
 * A journaled step's span (`mcp.task.step`), a child of the active run span; the step's closure runs inside its
 * context. Only steps that run get one: a step replayed from the journal is an event on the run span (stepEvent).
 */
export class StepSpan {
  private readonly span: Span;

  constructor(name: string, attempt: number) {
    this.span = trace.getTracer(TRACER).startSpan('mcp.task.step', {
      attributes: { 'mcp.task.step.name': name, 'mcp.task.step.attempt': attempt, 'mcp.task.step.replayed': false },
    });
  }

  within<T>(fn: () => Promise<T>): Promise<T> {
    return context.with(trace.setSpan(context.active(), this.span), fn);
  }

  /** The attempt failed; `retrying` when the step runs again after a durable wait. */
  fail(error: unknown, retrying: boolean): void {
    this.span.recordException(error instanceof Error ? error : String(error));
    this.span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    this.span.setAttribute('mcp.task.step.outcome', retrying ? 'retrying' : 'failed');
  }

  end(): void {
    this.span.end();
  }
}

/** An event on the active span (the run span): a step replayed from the journal, a sleep, a question asked. */
export function stepEvent(name: string, attributes: Record<string, string | number | boolean>): void {
  trace.getActiveSpan()?.addEvent(name, attributes);
}
