import type { RpcErrorObject, TaskClient, TaskEvent } from '../client/index.js';
import { ErrorCodes, type EventSource } from '../protocol/index.js';

/** Where an upstream task's events go: the proxy task's own event log (see createProxyWork). */
export interface UpstreamEventSink {
  /** Re-emits one event, in order; a refusal is the sink's to log, never thrown. */
  emit(event: TaskEvent): Promise<void>;
  /** A subscription the upstream refused or ended with an error (not the task's end). */
  refused?(error: RpcErrorObject): void;
}

/**
 * Follows an upstream task's event source until the upstream task has ended (`settled`) and what it emitted before
 * its end was read (the upstream's TS8/TS9 termination, the follower's TS17 drain), handing each event to `sink` in
 * order: push first; a push the upstream refuses or ends with an error (its per-caller stream limit, say) goes on by
 * polling from the last cursor. `signal` stops it at once. Never throws: the task goes on without its events (TS16).
 */
export async function followUpstreamEvents(
  client: TaskClient,
  source: EventSource,
  sink: UpstreamEventSink,
  settled: Promise<unknown>,
  signal: AbortSignal,
): Promise<void> {
  const ending = new AbortController();
  void settled.then(
    () => ending.abort(),
    () => ending.abort(),
  );
  // Undefined: from the source's initialCursor (the upstream task's first event), else from now (spec TS14).
  let cursor: string | undefined;
  try {
    for (const mode of ['push', 'poll'] as const) {
      let failed = false;
      const events = client.followEvents(source, {
        ...(cursor !== undefined && { cursor }),
        mode,
        signal,
        ending: ending.signal,
        onError: (error) => {
          failed = true;
          sink.refused?.(error);
        },
      });
      for await (const event of events) {
        await sink.emit(event);
        if (event.cursor !== null) cursor = event.cursor;
      }
      if (!failed || signal.aborted) return;
    }
  } catch (error) {
    // The upstream no longer offers Events (TaskNotSupportedError), or its connection failed: the task goes on.
    sink.refused?.({
      code: ErrorCodes.INTERNAL_ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
  }
}
