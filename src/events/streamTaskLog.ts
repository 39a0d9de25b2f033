import { eventLogTopic, isTerminal, TASK_STATUS_EVENT, type LoggedEvent, type TaskEngine } from '../engine/index.js';
import type { DialectAnswer, DialectContext } from '../dialects/index.js';
import { ErrorCodes, RpcError } from '../rpc/index.js';
import {
  RELATED_TASK_META,
  ResultType,
  TaskEventNotificationMethod,
  type TaskEventNotificationParams,
  type TasksStreamParams,
} from '../protocol/index.js';
import { DRAIN_MS } from './TaskEventSubscription.js';

/** Entries read per store read while catching up. */
const BATCH = 100;

/** `tasks/stream` as a session of this wire answers it at the end: `{}`, with `resultType` on the 2026-07-28 wire. */
export type TaskStreamEnd = Record<string, unknown>;

/**
 * Serves one `tasks/stream` (SEP-2694, EVENTS-SPEC §17) on the request's own response stream: every entry of the
 * task's log after `after` (all of them without it: TE11), in `seq` order (TE2), each as `notifications/tasks/event`
 * with the related task in `_meta` (TE4), then the live ones; once the task has ended and its terminal status entry is
 * delivered (or DRAIN_MS after it ended), the empty result (TE5, TE10). The log drops nothing while its task exists,
 * so a valid `after` is always served gap-free and `events_gone` (-32010) is never the answer (TE12, TE13). The
 * caller's scope is checked on every read: a foreign task answers as a missing one (TE15). A client abort stops
 * delivery, not the task (TE7).
 */
export async function streamTaskLog(
  engine: TaskEngine,
  params: TasksStreamParams,
  ctx: DialectContext,
  end: TaskStreamEnd,
  recheckMs: number,
): Promise<DialectAnswer> {
  const { taskId } = params;
  const scope = ctx.caller.scope;
  // spec TE15: the same check as tasks/get, before anything is sent.
  const length = await engine.eventCount(scope, taskId);
  // spec TE9 TE12: a cursor past the log would skip the events still to come.
  if (params.after !== undefined && params.after >= length)
    throw new RpcError(ErrorCodes.INVALID_PARAMS, "Invalid params: after is past the end of the task's event log", {
      taskId,
      length,
    });
  let next = params.after === undefined ? 0 : params.after + 1;
  let wake: (() => void) | undefined;
  let woken = false;
  const rouse = () => {
    woken = true;
    wake?.();
  };
  const stops = [
    engine.store.events.subscribe(eventLogTopic(taskId), rouse),
    engine.store.events.subscribe(taskId, rouse),
  ];
  ctx.signal.addEventListener('abort', rouse);
  const send = (event: LoggedEvent) => {
    const params: TaskEventNotificationParams = {
      seq: event.seq,
      taskId,
      type: event.type,
      payload: event.data,
      _meta: { [RELATED_TASK_META]: { taskId } }, // spec TE4
    };
    return ctx.outbound.relatedNotification({
      jsonrpc: '2.0',
      method: TaskEventNotificationMethod,
      params: { ...params },
    });
  };
  try {
    for (;;) {
      woken = false;
      let last: LoggedEvent | undefined;
      for (;;) {
        const page = await engine.readEvents(scope, taskId, next, BATCH);
        for (const event of page) {
          if (ctx.signal.aborted) return { noResponse: true };
          await send(event);
          next = event.seq + 1;
          last = event;
        }
        if (page.length < BATCH) break;
      }
      if (ctx.signal.aborted) return { noResponse: true };
      const task = await engine.get(scope, taskId);
      let waitMs = recheckMs;
      if (isTerminal(task.status) && next >= (await engine.eventCount(scope, taskId))) {
        const [tail] = last ? [last] : next > 0 ? await engine.readEvents(scope, taskId, next - 1, 1) : [];
        const settled = tail?.type === TASK_STATUS_EVENT && tail.data['status'] === task.status;
        // spec TE5 TE10: the task ended and everything is delivered: the empty result.
        if (settled || engine.clock.now() - task.lastUpdatedAt >= DRAIN_MS) return { result: { ...end } };
        waitMs = DRAIN_MS / 4;
      }
      if (woken) continue;
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

/** The end of a stream: `{}` on a 2025-era session, `{ resultType: "complete" }` on the 2026-07-28 wire. */
export function taskStreamEnd(modern: boolean): TaskStreamEnd {
  return modern ? { resultType: ResultType.complete } : {};
}
