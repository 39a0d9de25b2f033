import type {
  ElicitationParams,
  EventTypePage,
  InputContext,
  PolledEvents,
  TaskEvent,
  TaskHandle,
  TaskList,
  TaskOutcome,
  TaskSnapshot,
} from '../client/index.js';
import type { TaskRecord, TimelineEntry } from '../console/index.js';
import type { ToolSummary } from './ToolSummary.js';

export type ElicitAnswer =
  | { action: 'accept'; content?: Record<string, string | number | boolean | string[]> }
  | { action: 'decline' | 'cancel' };

/** A verified webhook delivery as `events webhook` received it. */
export interface WebhookDelivery {
  webhookId: string;
  subscriptionId: string | undefined;
  payload: Record<string, unknown>;
}

/** Everything a command shows; one implementation for people, one for programs (JSON lines). */
export interface Reporter {
  /** The server accepted the call: a task (with its id) or a plain call. */
  started(handle: TaskHandle): void;
  update(snapshot: TaskSnapshot): void;
  /** `--detach`: the task id, and nothing else on stdout. */
  detached(handle: TaskHandle): void;
  /** How the task ended; `withResult` prints the tool result too. */
  outcome(outcome: TaskOutcome, withResult: boolean): void;
  snapshot(snapshot: TaskSnapshot): void;
  /** A stored task and its transitions (`get --timeline`). */
  timeline(task: TaskRecord, entries: TimelineEntry[]): void;
  list(list: TaskList): void;
  tools(tools: ToolSummary[]): void;
  /** An event: a task's intermediate result during `call`/`watch` (`live`), or one of `events poll|stream`. */
  event(event: TaskEvent, live: boolean): void;
  /** `events list`: the server's event types. */
  eventTypes(page: EventTypePage): void;
  /** `events poll`: the batch's end, and where to poll next. */
  polled(result: PolledEvents): void;
  /** `events webhook`: a delivery whose signature verified (an event, or a control envelope with a `type`). */
  webhook(delivery: WebhookDelivery): void;
  note(text: string): void;
  error(error: unknown): void;
  elicit(params: ElicitationParams, context: InputContext): Promise<ElicitAnswer>;
  close(): void;
}
