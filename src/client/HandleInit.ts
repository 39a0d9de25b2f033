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
}
