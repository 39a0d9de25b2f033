import type { OwnerScope, TaskEngine, TaskRecord } from '../../engine/index.js';
import type { JsonRpcNotification, JsonRpcRequest } from '../../rpc/index.js';

/** Who is calling, as far as task ownership goes. */
export interface Caller {
  /** The owner new tasks get: the authenticated principal, else the session or connection. */
  owner: string;
  /** What reads are scoped by: the owner, or ANY_OWNER when the unguessable task id is the capability. */
  scope: OwnerScope;
  /** Whether callers can be told apart here, so `tasks/list` can be served (spec R66). */
  listable: boolean;
  /** Whether the owner is an authenticated principal. */
  authenticated: boolean;
  /** When the principal's credential expires (epoch ms), when authentication said: a push stream ends then. */
  credentialExpiresAt?: number;
  /** Quotas shared with other callers besides the owner's own (the address of a self-keyed anonymous client). */
  quotaGroup?: string;
}

/** How a tool may be called as a task, declared by the server author per tool. */
export interface ToolTaskPolicy {
  taskSupport: 'forbidden' | 'optional' | 'required';
  /** Retention when the requestor asks for none. */
  ttlMs?: number;
  /** Suggested polling interval reported to requestors. */
  pollIntervalMs?: number;
  /** Whether running the tool again after a crash is safe (idempotent work). Default false. */
  retrySafe?: boolean;
  /**
   * How the tool asks for input mid-call. `requests` (default): it sends elicitation/sampling requests and waits
   * (SDK `elicitInput`, `requestSampling`; works with SDK v1 and v2). `multiRoundTrip`: it returns
   * `inputRequired(...)` and is called again with the answers (SDK v2 only); a task then holds nothing in memory while
   * it waits, and on the 2026-07-28 wire questions asked before any work are answered without creating a task.
   */
  inputStyle?: 'requests' | 'multiRoundTrip';
  /**
   * On the 2026-07-28 wire, how long a `multiRoundTrip` tool may take to ask its first questions (or finish) before the
   * call becomes a task. Default 250 ms.
   */
  syncWindowMs?: number;
  /**
   * Tasks of this tool running at once, in this process (in-process executor) or across the deployment (queue
   * workers given the same tool policies). Further tasks wait, `working`. Default: no limit besides the slots.
   */
  concurrency?: number;
}

/** Messages to the requestor. `related` ones travel with the request being handled (on HTTP: its SSE stream). */
export interface Outbound {
  relatedRequest(message: JsonRpcRequest): Promise<void>;
  relatedNotification(message: JsonRpcNotification): Promise<void>;
  notification(message: JsonRpcNotification): Promise<void>;
}

/** Everything a dialect needs to answer one inbound request. */
export interface DialectContext {
  engine: TaskEngine;
  caller: Caller;
  policyFor(toolName: string): ToolTaskPolicy | undefined;
  /** Poll interval suggested when a tool declares none. */
  defaultPollIntervalMs: number;
  outbound: Outbound;
  /** Aborted when the requestor cancels the request or the connection closes. */
  signal: AbortSignal;
  /** A stable id of the requestor's connection, recorded on tasks it creates. */
  connectionId: string;
  /** The requestor's declared capabilities, mirrored to the tool's internal call. */
  clientCapabilities: Record<string, unknown> | undefined;
  /** Input requests already on their way on this connection (`taskId:key`), so they go out once. */
  inFlightInputs: Set<string>;
  /** Called with each task the request created, as its requestor was shown it, so the connection can follow it. */
  onTaskCreated(record: TaskRecord): void;
  /** Tells the rate limit the poll interval a `tasks/get` answer suggested for the request's task (spec R69). */
  advertisePollInterval(pollIntervalMs: number | undefined): void;
}
