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
   * Stops following: the iteration ends, and an event that arrives after it aborted is dropped, never yielded (what
   * `handle.events()` does once the handle saw the task end, spec TS19); those that arrived before are still yielded.
   */
  signal?: AbortSignal;
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
  if (options.mode !== 'poll') {
    const deadMs = 2 * (options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
    const pushed = yield* push(context, source, state, signal, deadMs, options.onError);
    if (pushed !== 'refused') return;
  }
  yield* poll(context, source, state, signal, options.pollFloorMs ?? 1000, options.onError);
}

type Frame = JSONRPCNotification & { params?: Record<string, unknown> };

async function* push(
  context: FollowContext,
  source: EventSource,
  state: { cursor: string | null },
  signal: AbortSignal,
  deadMs: number,
  onError: FollowOptions['onError'],
): AsyncGenerator<TaskEvent, 'ended' | 'refused', undefined> {
  for (let attempt = 0; attempt < MAX_SILENT_ATTEMPTS && !signal.aborted; attempt++) {
    const stream = new AbortController();
    const stopStream = () => stream.abort();
    signal.addEventListener('abort', stopStream, { once: true });
    const frames: Frame[] = [];
    let wake: (() => void) | undefined;
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
        const quietMs = Date.now() - lastFrameAt;
        // spec V59: no event and no heartbeat for twice the heartbeat interval: the stream is dead, open another.
        if (quietMs >= deadMs) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, deadMs - quietMs);
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
  signal: AbortSignal,
  floorMs: number,
  onError: FollowOptions['onError'],
): AsyncGenerator<TaskEvent, void, undefined> {
  while (!signal.aborted) {
    let reply;
    try {
      reply = await context.raw.request(
        EventsMethod.poll,
        { name: source.name, arguments: source.input, cursor: state.cursor, _meta: context.envelope() },
        { signal },
      ).reply;
    } catch {
      return;
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
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(result.nextPollMs, floorMs));
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
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
