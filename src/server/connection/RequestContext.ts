import type { TaskEngine, TaskRecord } from '../../engine/index.js';
import type { Caller, DialectContext, Outbound, ToolTaskPolicy } from '../../dialects/index.js';
import type { LazyAbort } from './LazyAbort.js';

/** A DialectContext but its signal, which RequestContext makes on first use. */
export type RequestContextParts = Omit<DialectContext, 'signal'>;

/**
 * What a dialect gets to answer one request. A class, so `signal` (an AbortController made only when read) is an
 * accessor of the prototype: with one an object literal defines on each instance, V8 kept every request's objects
 * (and its HTTP exchange) through each scavenge until the next full collection.
 */
export class RequestContext implements DialectContext {
  readonly engine: TaskEngine;
  readonly caller: Caller;
  readonly policyFor: (toolName: string) => ToolTaskPolicy | undefined;
  readonly defaultPollIntervalMs: number;
  readonly outbound: Outbound;
  readonly connectionId: string;
  readonly clientCapabilities: Record<string, unknown> | undefined;
  readonly inFlightInputs: Set<string>;
  readonly onTaskCreated: (record: TaskRecord) => void;
  readonly advertisePollInterval: (pollIntervalMs: number | undefined) => void;

  constructor(
    private readonly abort: LazyAbort,
    parts: RequestContextParts,
  ) {
    this.engine = parts.engine;
    this.caller = parts.caller;
    this.policyFor = parts.policyFor;
    this.defaultPollIntervalMs = parts.defaultPollIntervalMs;
    this.outbound = parts.outbound;
    this.connectionId = parts.connectionId;
    this.clientCapabilities = parts.clientCapabilities;
    this.inFlightInputs = parts.inFlightInputs;
    this.onTaskCreated = parts.onTaskCreated;
    this.advertisePollInterval = parts.advertisePollInterval;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }
}
