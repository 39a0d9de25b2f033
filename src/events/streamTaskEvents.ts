import { eventLogTopic, type TaskEngine } from '../engine/index.js';
import type { DialectAnswer, DialectContext } from '../dialects/index.js';
import { ErrorCodes, RpcError, type JsonRpcRequest } from '../rpc/index.js';
import { EventsNotification, ResultType, SUBSCRIPTION_ID_META, type EventsErrorBody } from '../protocol/index.js';
import { cursorAfter, taskEventOccurrence } from './taskEventOccurrence.js';
import type { StreamControl, StreamControls } from './StreamControls.js';
import { DRAIN_MS, taskEndedError, type TaskEventSubscription } from './TaskEventSubscription.js';
import type { StreamAccess } from './EventAccess.js';

/** What `events_conformance_yield_error` sends (a transient failure: the stream stays open). */
const CONTROL_ERROR: EventsErrorBody = {
  code: ErrorCodes.INTERNAL_ERROR,
  message: 'A transient failure (events_conformance_yield_error)',
  data: { reason: 'conformance' },
};
/** What `events_conformance_terminate` ends a stream with. */
const CONTROL_TERMINATION: EventsErrorBody = {
  code: ErrorCodes.EVENTS_NOT_FOUND,
  message: 'Subscription terminated (events_conformance_terminate)',
  data: { kind: 'event', reason: 'terminated' },
};

export interface StreamTiming {
  /** Between heartbeats (spec V51, V52: at least every 30 s). */
  heartbeatMs: number;
  /** The store is re-read this often in case a wake was lost (wakes are hints). */
  recheckMs: number;
}

/** Events sent per read while catching up, so a long backlog is paced by the stream's writes. */
const BATCH = 100;

/**
 * Serves one `events/stream` (push, EVENTS-SPEC §6) on the request's own SSE stream: `active` first (V45), each event of
 * the subscription with the cursor after it (V47), heartbeats carrying the cursor (V51–V54), and once the task has
 * ended, `terminated` then the final result (V49, V56, TS8). Every notification carries the request id as the
 * subscription id (V46). Wakes on the task's event log topic and its own changes, in any process sharing the store;
 * a client abort stops delivery at once and sends nothing more (V57).
 */
export async function streamTaskEvents(
  engine: TaskEngine,
  subscription: TaskEventSubscription,
  request: JsonRpcRequest,
  ctx: DialectContext,
  timing: StreamTiming,
  /** Told of a store failure the stream reported (once per spell of failures). */
  onFailure?: (error: unknown) => void,
  /** The conformance controls of the process (EVENTS-SPEC §14), when served. */
  controls?: StreamControls,
  /** The caller's access, re-verified while the stream lives (spec V65). */
  access?: StreamAccess,
): Promise<DialectAnswer> {
  const meta = { [SUBSCRIPTION_ID_META]: request.id };
  const notify = (method: string, params: Record<string, unknown>) => {
    const own = params['_meta'] as Record<string, unknown> | undefined;
    return ctx.outbound.relatedNotification({
      jsonrpc: '2.0',
      method,
      params: { ...params, _meta: { ...own, ...meta } },
    });
  };
  let wake: (() => void) | undefined;
  let woken = false;
  const rouse = () => {
    woken = true;
    wake?.();
  };
  const stops = [
    engine.store.events.subscribe(eventLogTopic(subscription.taskId), rouse),
    engine.store.events.subscribe(subscription.taskId, rouse),
  ];
  ctx.signal.addEventListener('abort', rouse);
  const pending: StreamControl[] = [];
  if (controls)
    stops.push(
      controls.listen(subscription.name, (control) => {
        pending.push(control);
        rouse();
      }),
    );
  try {
    // spec V45 V50: the first frame; `truncated` when the cursor's events were skipped (maxAgeMs).
    await notify(EventsNotification.active, { cursor: subscription.cursor, truncated: subscription.truncated });
    let lastSent = engine.clock.now();
    /** Set while the store fails: the stream said so once and retries until a read succeeds again. */
    let failing = false;
    for (;;) {
      woken = false;
      for (const control of pending.splice(0)) {
        // spec V48 V50: a diagnostic error or gap leaves the stream open; a termination ends it (V49).
        if (control === 'error') await notify(EventsNotification.error, { error: CONTROL_ERROR });
        else if (control === 'gap')
          await notify(EventsNotification.active, { cursor: subscription.cursor, truncated: true });
        else {
          await notify(EventsNotification.terminated, { error: CONTROL_TERMINATION });
          return { result: { resultType: ResultType.complete, _meta: meta } };
        }
        lastSent = engine.clock.now();
      }
      // Only the status outlives this turn of the loop: a stream waits for most of its life, and what its frame holds
      // then (the whole task record, say) is held for every open stream.
      let state: Awaited<ReturnType<TaskEventSubscription['state']>> | null;
      try {
        for (;;) {
          const { events, more } = await subscription.next(BATCH);
          for (const event of events) {
            if (ctx.signal.aborted) return { noResponse: true };
            await notify(EventsNotification.event, {
              ...taskEventOccurrence(subscription.taskId, event),
              cursor: cursorAfter(subscription.taskId, event),
            });
            lastSent = engine.clock.now();
          }
          if (!more) break;
        }
        if (ctx.signal.aborted) return { noResponse: true };
        state = await subscription.state(engine.clock);
        failing = false;
      } catch (error) {
        if (ctx.signal.aborted) return { noResponse: true };
        // A task that went away between reads ends the subscription as `state` does; anything else is the store's.
        if (error instanceof RpcError) state = undefined;
        else {
          // spec V48: a transient failure is a recoverable notification; the subscription stays open and retries.
          if (!failing) {
            failing = true;
            onFailure?.(error);
            await notify(EventsNotification.error, { error: storeFailure(error) });
            lastSent = engine.clock.now();
          }
          state = null;
        }
      }
      if (state === undefined || state?.ended) {
        // spec V49 TS8: terminated, then the final frame (SEP3415's StreamEventsResult shape).
        await notify(EventsNotification.terminated, { error: taskEndedError(subscription.taskId, state?.task) });
        return { result: { resultType: ResultType.complete, _meta: meta } };
      }
      const status = state?.task.status;
      state = null;
      // spec V65 V110: revoked access or an expired credential: `terminated` (-32012), then the final frame.
      const refused = await access?.ended();
      if (refused) {
        await notify(EventsNotification.terminated, { error: refused });
        return { result: { resultType: ResultType.complete, _meta: meta } };
      }
      if (ctx.signal.aborted) return { noResponse: true };
      const now = engine.clock.now();
      if (now - lastSent >= timing.heartbeatMs) {
        // spec V53 V54: a data frame carrying the cursor, never an SSE comment.
        await notify(EventsNotification.heartbeat, { cursor: subscription.cursor });
        lastSent = now;
      }
      if (woken && !failing) continue;
      const waitMs = Math.min(
        timing.recheckMs,
        access?.nextCheckMs() ?? Infinity,
        Math.max(1, timing.heartbeatMs - (now - lastSent)),
        status === undefined || status === 'working' || status === 'input_required' ? Infinity : DRAIN_MS / 4,
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (woken) wake();
      });
      wake = undefined;
    }
  } finally {
    for (const stop of stops) stop();
    ctx.signal.removeEventListener('abort', rouse);
  }
}

/**
 * What `notifications/events/error` says of a failed read (spec V48, §9: -32603 for a transient failure). The cause
 * stays in the server's log: a store's message may name hosts or files.
 */
function storeFailure(_error: unknown): EventsErrorBody {
  return {
    code: ErrorCodes.INTERNAL_ERROR,
    message: 'The event log could not be read; the stream retries',
    data: { reason: 'store_unavailable' },
  };
}
