import type { JSONRPCNotification } from '@modelcontextprotocol/client';

import {
  ErrorCodes,
  EventsMethod,
  EventsNotification,
  isObject,
  PollEventsResultSchema,
  SUBSCRIPTION_ID_META,
  type EventOccurrence,
  type EventSource,
} from '../protocol/index.js';
import type { RawChannel } from './RawChannel.js';
import type { RpcErrorObject } from './TaskClientError.js';

/** One event of a task's event source, with the cursor to resume after it (`null` for a type without replay). */
export interface TaskEvent {
  eventId: string;
  name: string;
  timestamp: string;
  data: Record<string, unknown>;
  /** Persist it and pass it back as `cursor` to resume after this event (after a restart, say). */
  cursor: string | null;
}

export interface FollowOptions {
  /** Resume after the event that carried this cursor; default the source's `initialCursor` (spec TS14). */
  cursor?: string | null;
  /**
   * Stops following at once: the iteration ends, and an event that arrives after it aborted is dropped, never yielded
   * (spec TS19; `handle.events()` aborts it when the iteration is left); those that arrived before are still yielded.
   */
  signal?: AbortSignal;
  /**
   * The task was seen terminal (what `handle.events()` signals): what the task emitted before its end is still read —
   * the push stream runs on to the server's termination, a poll is sent at once and the log read to its end — then the
   * iteration ends. A source silent for `DRAIN_MS` meanwhile ends it too, so a dead one cannot hang it (spec TS9, TS17).
   */
  ending?: AbortSignal;
  /** Push (`events/stream`) first, polling only where it is refused; `poll` polls only. Default `push`. */
  mode?: 'push' | 'poll';
  /** Never poll faster than this, whatever `nextPollMs` says (spec V42). Default 1000 ms. */
  pollFloorMs?: number;
  /**
   * The longest quiet the server's stream heartbeat allows: a push stream with no frame for twice this long is taken
   * for dead and opened again from the last cursor (spec V59). Default 30 s, the longest interval V52 lets a server use.
   */
  heartbeatMs?: number;
  /**
   * Told when the server refuses the subscription or ends it with an error other than the task's end (the iteration
   * then ends quietly, never failing the task: spec TS16 asks that it be logged).
   */
  onError?: (error: RpcErrorObject) => void;
}

/** spec V52: a server heartbeats at least every 30 s, so a stream silent for twice that is dead (V59). */
const DEFAULT_HEARTBEAT_MS = 30_000;
/** Consecutive reconnects of a stream that delivered nothing before push is given up. */
const MAX_SILENT_ATTEMPTS = 5;
/** How long a source may stay silent once the task was seen terminal before following gives up on it (spec TS9). */
export const DRAIN_MS = 2_000;

/** What following needs of the client: its raw channel and the 2026-07-28 envelope. */
export interface FollowContext {
  raw: RawChannel;
  envelope(): Record<string, unknown>;
  cancelByStream: boolean;
}

/** Refusals that say push is not offered here: poll instead (spec V12). */
const NO_PUSH = new Set<number>([ErrorCodes.METHOD_NOT_FOUND, ErrorCodes.EVENTS_UNSUPPORTED]);

/**
 * Follows a task's event source (Task Event Sources, EVENTS-SPEC §16.3): push on an `events/stream` where the server
 * offers it, else `events/poll` at the server's pace, from the source's `initialCursor` or a persisted cursor. Ends
 * when the subscription ends (the task reached a terminal status, TS17) or `signal` aborts; a refused or failed
 * subscription ends it quietly, never failing the task (TS16). A dropped stream is opened again from the last cursor
 * (V59).
 */
export async function* followEventSource(
  context: FollowContext,
  source: EventSource,
  options: FollowOptions = {},
): AsyncGenerator<TaskEvent, void, undefined> {
  const state = { cursor: options.cursor ?? source.initialCursor ?? null };
  const signal = options.signal ?? new AbortController().signal;
  const ending = options.ending ?? new AbortController().signal;
  if (options.mode !== 'poll') {
    const deadMs = 2 * (options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    const pushed = yield* push(context, source, state, { signal, ending }, deadMs, options.onError);
    if (pushed !== 'refused') return;
  }
  yield* poll(context, source, state, { signal, ending }, options.pollFloorMs ?? 1000, options.onError);
}

type Frame = JSONRPCNotification & { params?: Record<string, unknown> };

/** `signal` stops following at once; `ending` says the task was seen terminal: read on to its end, briefly. */
interface Stops {
  signal: AbortSignal;
  ending: AbortSignal;
}

async function* push(
  context: FollowContext,
  source: EventSource,
  state: { cursor: string | null },
  { signal, ending }: Stops,
  deadMs: number,
  onError: FollowOptions['onError'],
): AsyncGenerator<TaskEvent, 'ended' | 'refused', undefined> {
  /** When the last event came, and when the task was first seen terminal here: a source quiet since is dropped. */
  let lastEventAt = 0;
  let drainFrom: number | undefined;
  for (let attempt = 0; attempt < MAX_SILENT_ATTEMPTS && !signal.aborted; attempt++) {
    const stream = new AbortController();
    const stopStream = () => stream.abort();
    signal.addEventListener('abort', stopStream, { once: true });
    const frames: Frame[] = [];
    let wake: (() => void) | undefined;
    // The task was seen terminal: re-arm the wait below with the drain bound.
    const onEnding = () => wake?.();
    ending.addEventListener('abort', onEnding, { once: true });
    let lastFrameAt = Date.now();
    const openedAt = Date.now();
    let progressed = false;
    const call = context.raw.request(
      EventsMethod.stream,
      { name: source.name, arguments: source.input, cursor: state.cursor, _meta: context.envelope() },
      { signal: stream.signal, cancelByStream: context.cancelByStream },
    );
    const stop = context.raw.onNotification((notification) => {
      const meta = isObject(notification.params) ? notification.params['_meta'] : undefined;
      if (!isObject(meta) || meta[SUBSCRIPTION_ID_META] !== call.id) return false;
      lastFrameAt = Date.now();
      // spec TS19: the task was seen terminal (the follow stopped): an event arriving now is dropped.
      if (signal.aborted && notification.method === EventsNotification.event) return true;
      if (notification.method === EventsNotification.event) lastEventAt = Date.now();
      frames.push(notification as Frame);
      wake?.();
      return true;
    });
    let answer: { ok: boolean; error?: RpcErrorObject } | undefined;
    void call.reply.then(
      (reply) => {
        answer = reply.ok ? { ok: true } : { ok: false, error: reply.error };
        wake?.();
      },
      () => {
        answer = { ok: false };
        wake?.();
      },
    );
    let terminated = false;
    try {
      for (;;) {
        const frame = frames.shift();
        if (frame) {
          const params = frame.params ?? {};
          if (frame.method === EventsNotification.event) {
            const event = eventOf(params, params['cursor']);
            if (event) {
              progressed = true;
              state.cursor = event.cursor ?? state.cursor;
              yield event;
            }
          } else if (frame.method === EventsNotification.active || frame.method === EventsNotification.heartbeat) {
            // spec V28: a quiet stream's cursor is safe to keep.
            if (typeof params['cursor'] === 'string') state.cursor = params['cursor'];
          } else if (frame.method === EventsNotification.terminated) terminated = true;
          continue;
        }
        if (terminated || signal.aborted) return 'ended';
        if (answer) break;
        // spec TS9 TS17: the task was seen terminal, and the stream has held no event for a while: the server is not
        // ending it, so stop here rather than wait on a dead source.
        if (ending.aborted) drainFrom ??= Date.now();
        const drainLeft =
          drainFrom === undefined ? Infinity : DRAIN_MS - (Date.now() - Math.max(lastEventAt, drainFrom));
        if (drainLeft <= 0) return 'ended';
        const quietMs = Date.now() - lastFrameAt;
        // spec V59: no event and no heartbeat for twice the heartbeat interval: the stream is dead, open another.
        if (quietMs >= deadMs) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(deadMs - quietMs, drainLeft));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    } finally {
      stop();
      signal.removeEventListener('abort', stopStream);
      ending.removeEventListener('abort', onEnding);
      if (!answer) stream.abort();
    }
    if (answer?.ok) return 'ended';
    if (answer?.error !== undefined) {
      if (NO_PUSH.has(answer.error.code)) return 'refused';
      onError?.(answer.error);
      return 'ended';
    }
    // The stream dropped without an answer, or went silent: open it again from the last cursor. One that delivered an
    // event or lived past the dead-stream time was a working stream, so its drop does not count towards giving up.
    if (progressed || Date.now() - openedAt > deadMs) attempt = -1;
  }
  return 'ended';
}

async function* poll(
  context: FollowContext,
  source: EventSource,
  state: { cursor: string | null },
  { signal, ending }: Stops,
  floorMs: number,
  onError: FollowOptions['onError'],
): AsyncGenerator<TaskEvent, void, undefined> {
  while (!signal.aborted) {
    // spec TS9 TS17: sent after the task was seen terminal, this poll reads what the task emitted before its end (every
    // event is in the log by then); once it reached the log's end, following is over. A dead source is given DRAIN_MS.
    const draining = ending.aborted;
    // A poll still unanswered DRAIN_MS after the task was seen terminal is given up (this one, or one in flight then).
    const bound = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      timer = setTimeout(() => bound.abort(), DRAIN_MS);
    };
    if (draining) arm();
    else ending.addEventListener('abort', arm, { once: true });
    let reply;
    try {
      reply = await context.raw.request(
        EventsMethod.poll,
        { name: source.name, arguments: source.input, cursor: state.cursor, _meta: context.envelope() },
        { signal: AbortSignal.any([signal, bound.signal]) },
      ).reply;
    } catch {
      return;
    } finally {
      clearTimeout(timer);
      ending.removeEventListener('abort', arm);
    }
    // The subscription ended (the task is over) or was refused: TS16, the task itself goes on being followed.
    if (!reply.ok) {
      if (!endsWithTask(reply.error)) onError?.(reply.error);
      return;
    }
    // spec TS19: the batch arrived after the task was seen terminal: dropped.
    if (signal.aborted) return;
    const parsed = PollEventsResultSchema.safeParse(reply.result);
    if (!parsed.success) return;
    const result = parsed.data;
    for (const [index, occurrence] of result.events.entries()) {
      // Only the last event of a batch may carry the result's cursor: the ones before it resume before it.
      const event = eventOf(occurrence, index === result.events.length - 1 ? (result.cursor ?? null) : null);
      if (event) yield event;
    }
    state.cursor = result.cursor ?? null;
    if (result.hasMore) continue;
    if (draining) return;
    // The task seen terminal cuts the wait short: the last poll goes out at once.
    if (ending.aborted) continue;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(result.nextPollMs, floorMs));
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        ending.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
      ending.addEventListener('abort', done, { once: true });
    });
  }
}

/** A received occurrence as a TaskEvent with `cursor`; undefined when it lacks the fields every event has. */
export function eventOf(occurrence: Record<string, unknown> | EventOccurrence, cursor: unknown): TaskEvent | undefined {
  const { eventId, name, timestamp, data } = occurrence as Record<string, unknown>;
  if (typeof eventId !== 'string' || typeof name !== 'string' || typeof timestamp !== 'string' || !isObject(data))
    return undefined;
  return { eventId, name, timestamp, data, cursor: typeof cursor === 'string' ? cursor : null };
}

/** The answer to a poll after a task's last event: the subscription ended with its task (EVENTS-SPEC §16.4). */
function endsWithTask(error: RpcErrorObject): boolean {
  const data = error.data;
  return error.code === ErrorCodes.EVENTS_NOT_FOUND && isObject(data) && data['reason'] === 'task_terminal';
}
