import type { JsonRpcRequest, TaskOperation } from '../../rpc/index.js';
import type { DialectAnswer } from './DialectAnswer.js';
import type { Caller, DialectContext, ToolTaskPolicy } from './DialectContext.js';

/** What a connection knows when a request arrives: the request's own era and caller, and the session so far. */
export interface SessionView {
  /** The request travels on the 2026-07-28 wire (the per-request envelope), not in a 2025-era session. */
  readonly modern: boolean;
  readonly caller: Caller;
  /** The protocol version the session's `initialize` settled on, once it did. */
  readonly negotiatedVersion: string | undefined;
  /** The capabilities the requestor declared at `initialize`. */
  readonly clientCapabilities: Record<string, unknown> | undefined;
  /** The connection outlives one exchange (a session, stdio), so it can carry requests and notifications later. */
  readonly longLived: boolean;
  policyFor(toolName: string): ToolTaskPolicy | undefined;
}

/** How a dialect answers a request it takes on: the answer, the operation its errors name, its rate class. */
export interface Answerer {
  answer(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer>;
  /** What a thrown error says the request failed to do (spec R57–R60: "Cannot cancel task: …"). */
  operation: TaskOperation;
  /** The call runs without a task, so the task rate limit does not count it. */
  plainCall?: true;
}

/** Rewrites the successful result of a request the SDK server answered. */
export type Decoration = (result: Record<string, unknown>) => Record<string, unknown>;

/**
 * One generation of tasks as the server speaks it (or a feature that answers requests the same way). A connection
 * asks each dialect in turn for an answerer; the first one answers, and a request no dialect answers goes to the SDK
 * server.
 */
export interface ServerDialect {
  /** Whether this dialect answers the request itself. Decided synchronously, so message order is kept otherwise. */
  answererFor(request: JsonRpcRequest, session: SessionView): Answerer | undefined;
  /**
   * How this dialect changes the SDK server's answer to a request it does not answer (`initialize`, `tools/list`,
   * `server/discover`), fixed when the request arrives. Decorations apply in the order of the dialects.
   */
  decorate?(request: JsonRpcRequest, session: SessionView): Decoration | undefined;
  /** The request the SDK server gets when no dialect answers it (a generation may hide params its wire ignores). */
  forward?(request: JsonRpcRequest, session: SessionView): JsonRpcRequest;
}
