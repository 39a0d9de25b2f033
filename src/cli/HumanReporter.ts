import {
  isTerminalStatus,
  TaskClientError,
  TaskRpcError,
  textOf,
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
import { timelineLines, type TaskRecord, type TimelineEntry } from '../console/index.js';
import { promptElicitation } from './elicitation.js';
import type { LineReader } from './LineReader.js';
import type { ElicitAnswer, Reporter, WebhookDelivery } from './Reporter.js';
import { terminalSafeJson, visibleLine as line, visibleText } from './sanitize.js';
import { StatusLine } from './StatusLine.js';
import type { ToolSummary } from './ToolSummary.js';

/**
 * Output for people. Results go to stdout; status goes to stderr, as a live line on a terminal or one line per
 * change otherwise, so piping stdout captures only the result. Every server-supplied string is shown through the
 * sanitizer (`line` for a field, `visibleText` for multi-line text), and everything written passes it once more.
 */
export class HumanReporter implements Reporter {
  private readonly line: StatusLine | undefined;
  private readonly startedAt = Date.now();
  private last: TaskSnapshot | undefined;

  constructor(
    private readonly reader: LineReader,
    private readonly options: { noInput: boolean },
  ) {
    this.line = process.stderr.isTTY === true ? new StatusLine(process.stderr) : undefined;
  }

  started(handle: TaskHandle): void {
    const what = handle.isTask ? `task ${line(handle.taskId)} (${handle.dialect})` : `plain call (${handle.dialect})`;
    this.err(`${line(handle.toolName ?? 'tool')}: ${what}\n`);
    this.update(handle.snapshot);
  }

  update(snapshot: TaskSnapshot): void {
    const previous = this.last;
    this.last = snapshot;
    if (this.line !== undefined) {
      this.line.show(snapshot);
      return;
    }
    // The outcome line reports the end; the server's own terminal status may differ from it (an isError result is
    // `completed` on the extension's wire but a failure here).
    if (isTerminalStatus(snapshot.status)) return;
    // Without a terminal, one line per status change; progress alone would flood the log.
    if (
      previous !== undefined &&
      previous.status === snapshot.status &&
      previous.statusMessage === snapshot.statusMessage &&
      previous.cancelRequested === snapshot.cancelRequested
    ) {
      return;
    }
    const status = line(snapshot.cancelRequested === true ? `${snapshot.status} (stopping)` : snapshot.status);
    this.err(
      `[${this.elapsed()}s] ${status}${snapshot.statusMessage === undefined ? '' : `  ${line(snapshot.statusMessage)}`}\n`,
    );
  }

  detached(handle: TaskHandle): void {
    this.out(`${line(handle.taskId)}\n`);
  }

  outcome(outcome: TaskOutcome, withResult: boolean): void {
    this.line?.clear();
    const id = outcome.snapshot.taskId === undefined ? '' : ` (task ${line(outcome.snapshot.taskId)})`;
    if (outcome.status === 'completed') {
      if (withResult) this.printResult(outcome.result);
      this.err(`completed in ${this.durationOf(outcome.snapshot)}s${id}\n`);
      return;
    }
    if (outcome.status === 'cancelled') {
      this.err(`cancelled${id}${outcome.message === undefined ? '' : `: ${visibleText(outcome.message)}`}\n`);
      return;
    }
    if (withResult && outcome.result !== undefined) this.printResult(outcome.result);
    const code = outcome.error === undefined ? '' : ` [${line(outcome.error.code)}]`;
    // A failure's message is often the tool's multi-line text.
    this.err(`failed${id}${code}: ${visibleText(outcome.message)}\n`);
  }

  snapshot(snapshot: TaskSnapshot): void {
    const rows: Array<[string, unknown]> = [
      ['task', snapshot.taskId],
      ['status', snapshot.status],
      ['message', snapshot.statusMessage],
      ['dialect', snapshot.dialect],
      ['created', snapshot.createdAt],
      ['updated', snapshot.lastUpdatedAt],
      [
        'ttl',
        snapshot.ttlMs === null ? 'unlimited' : snapshot.ttlMs === undefined ? undefined : `${snapshot.ttlMs} ms`,
      ],
      ['poll', snapshot.pollIntervalMs === undefined ? undefined : `${snapshot.pollIntervalMs} ms`],
    ];
    for (const [name, value] of rows) if (value !== undefined) this.out(`${name.padEnd(8)} ${line(value)}\n`);
  }

  list(list: TaskList): void {
    if (list.tasks.length === 0) {
      this.err(list.source === 'store' ? 'no tasks: the server holds none of the ones stored here\n' : 'no tasks\n');
    }
    for (const task of list.tasks) {
      this.out(`${line(task.taskId ?? '-')}  ${line(task.status).padEnd(14)} ${line(task.statusMessage ?? '')}\n`);
    }
    if (list.nextCursor !== undefined) this.err(`more: --cursor ${line(list.nextCursor)}\n`);
  }

  tools(tools: ToolSummary[]): void {
    for (const tool of tools) {
      this.out(`${line(tool.name).padEnd(36)} ${line(tool.taskSupport).padEnd(14)} ${line(tool.description ?? '')}\n`);
      if (tool.arguments.length === 0) continue;
      const args = tool.arguments.map((arg) => `${line(arg.name)}${arg.required ? '' : '?'}: ${line(arg.type)}`);
      this.out(`${''.padEnd(4)}${args.join(', ')}\n`);
    }
  }

  timeline(task: TaskRecord, entries: TimelineEntry[]): void {
    const tool = task.request.params['name'];
    const head = `task ${task.taskId} ${task.status}${typeof tool === 'string' ? ` (${tool})` : ''} owner ${task.owner}`;
    this.out(`${[head, ...timelineLines(entries)].map(line).join('\n')}\n`);
  }

  event(event: TaskEvent, live: boolean): void {
    const text = `${line(event.name)}  ${line(terminalSafeJson(event.data))}`;
    if (!live) {
      this.out(`${line(event.timestamp)}  ${text}\n`);
      return;
    }
    // An intermediate result is shown like a status change: on stderr, stdout keeping only the result.
    this.line?.clear();
    this.err(`[${this.elapsed()}s] event ${text}\n`);
    if (this.line !== undefined && this.last !== undefined) this.line.show(this.last);
  }

  eventTypes(page: EventTypePage): void {
    if (page.events.length === 0) this.err('no event types\n');
    for (const type of page.events) {
      this.out(`${line(type.name).padEnd(40)} ${line(type.delivery.join(',')).padEnd(18)} ${line(type.description)}\n`);
    }
    if (page.nextCursor !== undefined) this.err(`more: --cursor ${line(page.nextCursor)}\n`);
  }

  polled(result: PolledEvents): void {
    const notes = [result.truncated && 'some events were skipped', result.hasMore && 'more are ready'].filter(Boolean);
    const tail = notes.length === 0 ? '' : ` (${notes.join('; ')})`;
    this.err(`next: --cursor ${line(result.cursor ?? 'null')}${tail}\n`);
  }

  webhook(delivery: WebhookDelivery): void {
    const { payload } = delivery;
    if (typeof payload['type'] === 'string') {
      this.out(`webhook ${line(payload['type'])}  ${line(terminalSafeJson(payload))}\n`);
      return;
    }
    const name = line(payload['name']);
    this.out(`webhook ${line(delivery.webhookId)}  ${name}  ${line(terminalSafeJson(payload['data'] ?? null))}\n`);
  }

  note(text: string): void {
    this.line?.clear();
    this.err(`${visibleText(text)}\n`);
    if (this.line !== undefined && this.last !== undefined) this.line.show(this.last);
  }

  error(error: unknown): void {
    this.line?.clear();
    const code = error instanceof TaskRpcError ? ` [${line(error.code)}]` : '';
    const message = error instanceof Error ? error.message : String(error);
    const kind = error instanceof TaskClientError ? `${error.kind} error` : 'error';
    this.err(`mcp-tasks: ${kind}${code}: ${visibleText(message)}\n`);
  }

  async elicit(params: ElicitationParams, context: InputContext): Promise<ElicitAnswer> {
    if (this.options.noInput) return { action: 'decline' };
    this.line?.clear();
    try {
      return await promptElicitation(params, context, this.reader, (text) => this.err(text));
    } finally {
      if (this.line !== undefined && this.last !== undefined) this.line.show(this.last);
    }
  }

  close(): void {
    this.line?.clear();
    this.reader.close();
  }

  private printResult(result: Parameters<typeof textOf>[0]): void {
    const text = textOf(result);
    const structured = (result as { structuredContent?: unknown }).structuredContent;
    if (text !== '') this.out(`${visibleText(text)}\n`);
    else this.out(`${terminalSafeJson(structured ?? result.content ?? [], 2)}\n`);
  }

  /**
   * How long the task ran, by the server's clock (created to last updated): `watch` and `result` join a task already
   * under way, so their own running time says nothing about it. A plain call has no times: this run's then.
   */
  private durationOf(snapshot: TaskSnapshot): string {
    const start = Date.parse(snapshot.createdAt ?? '');
    const end = Date.parse(snapshot.lastUpdatedAt ?? '');
    if (Number.isFinite(start) && Number.isFinite(end) && end >= start) return ((end - start) / 1000).toFixed(1);
    return this.elapsed();
  }

  private elapsed(): string {
    return ((Date.now() - this.startedAt) / 1000).toFixed(1);
  }

  /** The last guard: whatever reaches the terminal has had its controls made visible (newlines and tabs kept). */
  private out(text: string): void {
    process.stdout.write(visibleText(text));
  }

  private err(text: string): void {
    process.stderr.write(visibleText(text));
  }
}
