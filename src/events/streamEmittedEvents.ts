import type { DialectAnswer, DialectContext } from '../dialects/index.js';
import { ErrorCodes, type JsonRpcRequest } from '../rpc/index.js';
import { EventsNotification, ResultType, SUBSCRIPTION_ID_META, type EventsErrorBody } from '../protocol/index.js';
import { emittedOccurrence, type EmitSubscription } from './EmitSubscription.js';
import type { StreamControl, StreamControls } from './StreamControls.js';
import type { StreamTiming } from './streamTaskEvents.js';
import type { StreamAccess } from './EventAccess.js';

/** Events sent per read while catching up, so a backlog is paced by the stream's writes. */
const BATCH = 100;

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
/** A restart replaced the type's ring: a subscription of the old process ends (EVENTS-SPEC §12). */
const RESTARTED: EventsErrorBody = {
  code: ErrorCodes.INTERNAL_ERROR,
  message: 'The server restarted; subscribe again from your cursor',
  data: { reason: 'restart' },
};

/**
 * Serves one `events/stream` of an untasked type (push, EVENTS-SPEC §6) on the request's own SSE stream: `active`
 * first (V45), each event the caller may see with the cursor after it (V47), a fresh `active` with `truncated: true`
 * when the ring dropped events this stream had not sent (V50), heartbeats carrying the cursor (V51–V54). It never ends
 * by itself; a restart ends it with `terminated` then the final result (V49, V56). Every notification carries the
 * request id as the subscription id (V46). Woken by appends to the ring in this process; a client abort stops
 * delivery at once and sends nothing more (V57).
 */
export async function streamEmittedEvents(
  subscription: EmitSubscription,
  request: JsonRpcRequest,
  ctx: DialectContext,
  timing: Pick<StreamTiming, 'heartbeatMs'>,
  now: () => number,
  controls?: StreamControls,
  /** The caller's access, re-verified while the stream lives (spec V65). */
  access?: StreamAccess,
): Promise<DialectAnswer> {
  const meta = { [SUBSCRIPTION_ID_META]: request.id };
  const notify = (method: string, params: Record<string, unknown>) =>
    ctx.outbound.relatedNotification({ jsonrpc: '2.0', method, params: { ...params, _meta: meta } });
  const ring = subscription.ring;
  let wake: (() => void) | undefined;
  let woken = false;
  const rouse = () => {
    woken = true;
    wake?.();
  };
  const pending: StreamControl[] = [];
  const stops = [ring.listen(rouse)];
  if (controls)
    stops.push(
      controls.listen(ring.name, (control) => {
        pending.push(control);
        rouse();
      }),
    );
  ctx.signal.addEventListener('abort', rouse);
  const end = async (error: EventsErrorBody): Promise<DialectAnswer> => {
    await notify(EventsNotification.terminated, { error });
    return { result: { resultType: ResultType.complete, _meta: meta } };
  };
  try {
    await notify(EventsNotification.active, { cursor: subscription.cursor, truncated: subscription.truncated });
    let lastSent = now();
    for (;;) {
      woken = false;
      if (ctx.signal.aborted) return { noResponse: true };
      if (ring.closed) return await end(RESTARTED);
      for (const control of pending.splice(0)) {
        // spec V48 V50: a diagnostic error or gap leaves the stream open; a termination ends it (V49).
        if (control === 'error') await notify(EventsNotification.error, { error: CONTROL_ERROR });
        else if (control === 'gap')
          await notify(EventsNotification.active, { cursor: subscription.cursor, truncated: true });
        else return await end(CONTROL_TERMINATION);
        lastSent = now();
      }
      for (;;) {
        const { events, more, gap } = subscription.next(BATCH);
        // spec V50 V33: events this stream had not sent were dropped: a fresh active whose cursor is where it goes on
        // (before the oldest kept it sends next), then those events.
        if (gap) {
          const cursor = events[0] ? ring.encode(events[0].seq) : subscription.cursor;
          await notify(EventsNotification.active, { cursor, truncated: true });
        }
        for (const entry of events) {
          if (ctx.signal.aborted) return { noResponse: true };
          await notify(EventsNotification.event, { ...emittedOccurrence(ring, entry) });
        }
        if (gap || events.length > 0) lastSent = now();
        if (!more) break;
      }
      // spec V65 V110: revoked access or an expired credential: `terminated` (-32012), then the final frame.
      const refused = await access?.ended();
      if (refused) return await end(refused);
      if (ctx.signal.aborted) return { noResponse: true };
      const at = now();
      if (at - lastSent >= timing.heartbeatMs) {
        // spec V53 V54: a data frame carrying the cursor, never an SSE comment.
        await notify(EventsNotification.heartbeat, { cursor: subscription.cursor });
        lastSent = at;
      }
      if (woken) continue;
      await new Promise<void>((resolve) => {
        const waitMs = Math.min(Math.max(1, timing.heartbeatMs - (at - lastSent)), access?.nextCheckMs() ?? Infinity);
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
