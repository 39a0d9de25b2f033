import type { TaskChange } from '../record/TaskChange.js';
import { randomUUID } from 'node:crypto';

import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Span } from '@opentelemetry/api';

import type { EngineLogger } from '../contracts/EngineHooks.js';
import type { TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';
import { storedTraceContext, taskAttributes, TRACE_CONTEXT_META, TRACER } from './taskTracing.js';

/** Most task spans one process keeps open; the oldest is handed over (below) when a new task needs room. */
export const MAX_OPEN_TASK_SPANS = 10_000;

/** What the task spans need of the engine. */
export interface TaskSpanHooks {
  /** Calls `listener` with the task after each of its changes, from any process (undefined once gone). */
  observe(
    taskId: string,
    listener: (record: TaskRecord | undefined) => void,
    wants?: (change: TaskChange) => boolean,
  ): () => void;
  /** Stores that `holder` no longer holds the task's span (releaseSpanHolder); the record now stored, if any. */
  release(taskId: string, holder: string): Promise<TaskRecord | undefined>;
}

/**
 * The `mcp.task` span of each task, from its creation to its terminal status, with the run spans as its children.
 *
 * A span object cannot outlive the process that started it, and `@opentelemetry/api` cannot choose span ids, so the
 * creating process starts the span under the creating request, stores its W3C context in the record
 * (`meta.traceContext`, with `holder`: the id of the process holding the span) and keeps the span open in a bounded
 * map. Run spans, in any process, are children of that stored context. The holder ends the span, with
 * `endTime = terminalAt` and `mcp.task.status`, as soon as it learns the task is terminal: its own write of the
 * terminal status, or the store's task events (cross-process on PostgreSQL and Redis), which it observes while the
 * span is open. When nobody holds the span any more — the map handed it over, the holder shut down, or the holder
 * was an in-process runner whose lease expired (a crash) — the holder mark is removed from the record, the span
 * object is dropped unexported, and whoever stores the terminal status emits `mcp.task.end` in its place (start
 * `createdAt`, end `terminalAt`, parent the stored context), so the trace still shows the task's duration.
 * Not covered: a holder that dies without holding the task's lease (a queue-executor server) leaves no task span.
 */
export class TaskSpans {
  private readonly open = new Map<string, { span: Span; stop: () => void }>();
  /**
   * Task ids in the order their spans opened, those of ended spans dropped lazily: the oldest open span is found
   * without iterating the map from its front, which walks past the slot of every span ended before.
   */
  private order: string[] = [];
  private head = 0;
  private readonly instance = `spans:${randomUUID()}`;

  constructor(
    private readonly hooks: TaskSpanHooks,
    /** The runner id when this process runs the tasks it creates (its lease then tells whether it is alive). */
    private readonly runnerId: () => string | undefined,
    private readonly logger: EngineLogger,
    private readonly maxOpen = MAX_OPEN_TASK_SPANS,
  ) {}

  /** Open task spans (for tests and metrics). */
  get size(): number {
    return this.open.size;
  }

  private get holder(): string {
    return this.runnerId() ?? this.instance;
  }

  /**
   * Starts the span of a task about to be stored, as a child of the active context (the creating request), and
   * stores its context on the record. Nothing is stored when no SDK (no propagator) is registered.
   */
  begin(record: TaskRecord): Span {
    const attributes = taskAttributes(record);
    const tool = attributes['gen_ai.tool.name'];
    const span = trace
      .getTracer(TRACER)
      .startSpan(`mcp.task${tool === undefined ? '' : ` ${tool}`}`, { attributes, startTime: record.createdAt });
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), carrier);
    if (carrier['traceparent'] !== undefined) {
      record.meta[TRACE_CONTEXT_META] = span.isRecording() ? { ...carrier, holder: this.holder } : carrier;
    }
    return span;
  }

  /** The task is stored: its span stays open until the task ends. */
  hold(record: TaskRecord, span: Span): void {
    if (!span.isRecording()) return;
    if (this.open.size >= this.maxOpen) {
      const oldest = this.oldest();
      if (oldest !== undefined) void this.handOver(oldest);
    }
    const { taskId } = record;
    const stop = this.hooks.observe(
      taskId,
      (current) => {
        if (!current) this.end(taskId, undefined);
        else if (isTerminal(current.status)) this.end(taskId, current);
      },
      (change) => isTerminal(change.status),
    );
    this.open.set(taskId, { span, stop });
    this.order.push(taskId);
    // The ids of ended spans go once they are half the list, so it stays within twice the open spans.
    if (this.order.length > 64 && this.order.length > 2 * this.open.size) {
      this.order = this.order.slice(this.head).filter((id) => this.open.has(id));
      this.head = 0;
    }
  }

  /** The task whose span has been open longest. */
  private oldest(): string | undefined {
    for (; this.head < this.order.length; this.head++) {
      const taskId = this.order[this.head] as string;
      if (this.open.has(taskId)) return taskId;
    }
    return undefined;
  }

  /** This process has just stored the task's terminal status. */
  settled(record: TaskRecord): void {
    if (this.open.has(record.taskId)) return this.end(record.taskId, record);
    const stored = storedTraceContext(record);
    // A holder still holds the span and learns of the end through the task's events.
    if (!stored || (stored.holder !== undefined && stored.holder !== this.holder)) return;
    const span = trace
      .getTracer(TRACER)
      .startSpan(
        'mcp.task.end',
        { attributes: taskAttributes(record), startTime: record.createdAt },
        propagation.extract(ROOT_CONTEXT, stored),
      );
    finish(span, record);
  }

  /** Hands every open span over (shutdown): the tasks' settlers emit `mcp.task.end` instead. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.open.keys()].map((taskId) => this.handOver(taskId)));
  }

  private end(taskId: string, record: TaskRecord | undefined): void {
    const held = this.open.get(taskId);
    if (!held) return;
    this.open.delete(taskId);
    held.stop();
    if (record) finish(held.span, record);
    else {
      // Deleted or expired before it ended.
      held.span.setAttribute('mcp.task.status', 'gone');
      held.span.end();
    }
  }

  /** Stops holding a span: released in the store, or ended here when the task ended meanwhile. */
  private async handOver(taskId: string): Promise<void> {
    const held = this.open.get(taskId);
    if (!held) return;
    this.open.delete(taskId);
    held.stop();
    try {
      const record = await this.hooks.release(taskId, this.holder);
      if (record && isTerminal(record.status)) finish(held.span, record);
      else if (!record) held.span.end();
    } catch (error) {
      this.logger.warn({ taskId, error: String(error) }, 'could not hand the task span over');
    }
  }
}

/** Ends a task span at the task's terminal time, with its final status. */
function finish(span: Span, record: TaskRecord): void {
  span.setAttribute('mcp.task.status', record.status);
  if (record.status === 'failed') {
    span.setStatus({ code: SpanStatusCode.ERROR, ...(record.statusMessage && { message: record.statusMessage }) });
  }
  span.end(record.terminalAt ?? record.lastUpdatedAt);
}
