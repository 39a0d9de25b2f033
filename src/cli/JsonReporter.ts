import {
  TaskClientError,
  TaskRpcError,
  type ElicitationParams,
  type EventTypePage,
  type InputContext,
  type PolledEvents,
  type TaskEvent,
  type TaskHandle,
  type TaskList,
  type TaskOutcome,
  type TaskSnapshot,
} from '../client/index.js';
import type { TaskRecord, TimelineEntry } from '../console/index.js';
import { readJsonElicitation } from './elicitation.js';
import type { LineReader } from './LineReader.js';
import type { ElicitAnswer, Reporter, WebhookDelivery } from './Reporter.js';
import { terminalSafeJson } from './sanitize.js';
import type { ToolSummary } from './ToolSummary.js';

/**
 * Output for programs: one JSON object per line on stdout, each with a `type`. The lines often end up on a terminal
 * too, so characters a terminal acts on (C1 controls, U+2028/2029, bidi overrides) are `\uXXXX` escapes in the text;
 * the parsed values are unchanged.
 */
export class JsonReporter implements Reporter {
  constructor(
    private readonly reader: LineReader,
    private readonly options: { noInput: boolean },
  ) {}

  started(handle: TaskHandle): void {
    this.emit({
      type: handle.isTask ? 'task' : 'call',
      tool: handle.toolName,
      dialect: handle.dialect,
      ...(handle.taskId !== undefined && { taskId: handle.taskId }),
    });
    this.update(handle.snapshot);
  }

  update(snapshot: TaskSnapshot): void {
    this.emit({ type: 'status', ...snapshot });
  }

  detached(handle: TaskHandle): void {
    this.emit({ type: 'detached', taskId: handle.taskId, dialect: handle.dialect });
  }

  outcome(outcome: TaskOutcome, withResult: boolean): void {
    const { snapshot, ...rest } = outcome;
    const body = withResult ? rest : { status: rest.status, ...('message' in rest && { message: rest.message }) };
    this.emit({ type: 'outcome', ...body, taskId: snapshot.taskId, snapshot });
  }

  snapshot(snapshot: TaskSnapshot): void {
    this.emit({ type: 'status', ...snapshot });
  }

  list(list: TaskList): void {
    for (const task of list.tasks) this.emit({ type: 'status', ...task });
    this.emit({ type: 'list', source: list.source, count: list.tasks.length, nextCursor: list.nextCursor });
  }

  tools(tools: ToolSummary[]): void {
    for (const tool of tools) this.emit({ type: 'tool', ...tool });
  }

  timeline(task: TaskRecord, entries: TimelineEntry[]): void {
    this.emit({ type: 'timeline', taskId: task.taskId, status: task.status, owner: task.owner, entries });
  }

  event(event: TaskEvent): void {
    this.emit({ type: 'event', ...event });
  }

  eventTypes(page: EventTypePage): void {
    for (const type of page.events) this.emit({ type: 'eventType', ...type });
    if (page.nextCursor !== undefined) this.emit({ type: 'more', nextCursor: page.nextCursor });
  }

  polled(result: PolledEvents): void {
    const { events: _events, ...rest } = result;
    this.emit({ type: 'cursor', ...rest });
  }

  webhook(delivery: WebhookDelivery): void {
    this.emit({ type: 'webhook', ...delivery });
  }

  note(text: string): void {
    this.emit({ type: 'note', message: text });
  }

  error(error: unknown): void {
    this.emit({
      type: 'error',
      kind: error instanceof TaskClientError ? error.kind : 'error',
      message: error instanceof Error ? error.message : String(error),
      ...(error instanceof TaskRpcError && { code: error.code, ...(error.data !== undefined && { data: error.data }) }),
    });
  }

  async elicit(params: ElicitationParams, context: InputContext): Promise<ElicitAnswer> {
    const { signal: _signal, ...from } = context;
    this.emit({ type: 'elicitation', ...from, params });
    if (this.options.noInput) return { action: 'decline' };
    return readJsonElicitation(this.reader);
  }

  close(): void {
    this.reader.close();
  }

  private emit(event: Record<string, unknown>): void {
    process.stdout.write(`${terminalSafeJson(event)}\n`);
  }
}
