import type { Caller, SessionView, ToolTaskPolicy } from '../../dialects/index.js';

/** What a connection's `initialize` settled: the requestor's capabilities and the protocol version. */
export interface SettledSession {
  clientCapabilities?: Record<string, unknown> | undefined;
  negotiatedVersion?: string | undefined;
}

/**
 * One request's view of its connection: its era and caller, and what the session has settled so far, read live. A
 * class, so the live fields are accessors of the prototype: with accessors an object literal defines on each
 * instance, V8 kept every request's objects (and its HTTP exchange) through each scavenge until the next full
 * collection.
 */
export class ConnectionSessionView implements SessionView {
  constructor(
    readonly modern: boolean,
    readonly caller: Caller,
    private readonly settled: SettledSession,
    private readonly isLongLived: () => boolean,
    /** Passed around on its own by the dialects, so a function of the connection rather than a method. */
    readonly policyFor: (toolName: string) => ToolTaskPolicy | undefined,
  ) {}

  get negotiatedVersion(): string | undefined {
    return this.settled.negotiatedVersion;
  }

  get clientCapabilities(): Record<string, unknown> | undefined {
    return this.settled.clientCapabilities;
  }

  get longLived(): boolean {
    return this.isLongLived();
  }
}
