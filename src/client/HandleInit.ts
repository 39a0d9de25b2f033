import type { EventSource } from '../protocol/index.js';
import type { StartResult } from './dialects/TaskDialect.js';
import type { TaskSnapshot } from './TaskSnapshot.js';

/** What a new handle starts from: a call just made, or a task id to attach to. */
export interface HandleInit {
  toolName?: string;
  snapshot: TaskSnapshot;
  /** How the call began; absent when attaching to an existing task id. */
  started?: StartResult;
  /** Aborts a plain call. */
  abort?: AbortController;
  /** SEP-1686: the original request's wire id. */
  requestId?: string | number;
  answeredKeys?: Iterable<string>;
  /** The event source a stored handle kept, when attaching to a task this process did not start. */
  eventSource?: EventSource;
}
