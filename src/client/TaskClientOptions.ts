import type { Implementation } from '@modelcontextprotocol/client';

import type { DialectPreference } from './DialectName.js';
import type { CallMode } from './dialects/TaskDialect.js';
import type { HandleStore } from './HandleStore.js';
import type { ElicitationHandler, SamplingHandler } from './InputRouter.js';
import type { PollPolicy } from './PollSchedule.js';
import type { TaskSnapshot } from './TaskSnapshot.js';

export interface TaskClientOptions {
  /** `clientInfo` sent to the server. */
  clientInfo?: Implementation;
  /** Which generation to speak; `auto` picks from what the server advertises. */
  dialect?: DialectPreference;
  /**
   * Protocol era negotiation when `dialect` is `auto`: `legacy` (2025 `initialize`), `auto` (probe with
   * `server/discover`, fall back to `initialize`) or a pin. Default: `auto` over HTTP, `legacy` over stdio, where a
   * probe costs an extra server process.
   */
  protocol?: 'legacy' | 'auto' | '2026-07-28';
  /** Answers `elicitation/create`, however it arrives. Without it, elicitation is declined and not declared. */
  elicitation?: ElicitationHandler;
  /** Answers `sampling/createMessage`, however it arrives. */
  sampling?: SamplingHandler;
  /** Accept task-augmented elicitation and sampling from 2025-11-25 servers (client-hosted tasks). Default true. */
  hostTasks?: boolean;
  /** A handle store (or its file path): in-flight task ids survive a host restart, and `resume()` continues them. */
  store?: string | HandleStore;
  /**
   * Resume the newest 2025-era HTTP session stored for the server when the target names none (default). `false`
   * resumes only the session the target names: the host decides which session a run uses.
   */
  resumeStoredSession?: boolean;
  /**
   * Drop a stored handle once its outcome is known (default). `false` keeps it, for hosts that only watch a task
   * and leave fetching the result to a later process.
   */
  forgetSettled?: boolean;
  /** Retention to request for new tasks: `task.ttl` (2025-11-25) or `keepAlive` (SEP-1686). */
  ttlMs?: number;
  /** Backoff when the server suggests no poll interval. */
  poll?: Partial<PollPolicy>;
  /** Timeout of one short request (a single `tasks/get`, `tasks/cancel`); never applied to the task as a whole. */
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Consecutive failed polls tolerated before a handle gives up. */
  maxPollFailures?: number;
  /** Out-of-band SDK and transport errors, for logging. */
  onError?: (error: Error) => void;
}

export interface CallToolOptions {
  /** `auto` (default): a task where the server allows it; `task`: fail rather than run plainly; `plain`: never a task. */
  mode?: CallMode;
  ttlMs?: number;
  /** Start following the call at once (default). `false` leaves polling to whoever calls `outcome()` later. */
  follow?: boolean;
  /** More `params._meta` to send with the call, e.g. the W3C `traceparent`/`tracestate` of the caller's trace. */
  meta?: Record<string, unknown>;
}

export interface TaskList {
  tasks: TaskSnapshot[];
  nextCursor?: string;
  /** `server`: the server's own listing; `store`: the handles this client stored (the extension has no tasks/list). */
  source: 'server' | 'store';
}
