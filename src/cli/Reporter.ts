import type {
  ElicitationParams,
  InputContext,
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
  note(text: string): void;
  error(error: unknown): void;
  elicit(params: ElicitationParams, context: InputContext): Promise<ElicitAnswer>;
  close(): void;
}
