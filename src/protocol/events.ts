import * as z from 'zod';

/**
 * The Events extension `io.modelcontextprotocol/events` on the 2026-07-28 wire (EVENTS-SPEC §1–§9): event types
 * (`events/list`), occurrences and cursors, poll, push and webhook delivery. Shared by the server and the client.
 */
export const EVENTS_EXTENSION = 'io.modelcontextprotocol/events';

/**
 * Our hint in an event type's descriptor `_meta` (`events/list`): the tools whose tasks name the type as their event
 * source. The spec has no such field; a proxy reads it to name the same source on its own tasks of those tools.
 */
export const EVENT_SOURCE_TOOLS_META = 'io.github.mcp-tasks/tools';

export const EventsMethod = {
  list: 'events/list',
  poll: 'events/poll',
  stream: 'events/stream',
  subscribe: 'events/subscribe',
  unsubscribe: 'events/unsubscribe',
} as const;
export type EventsMethodName = (typeof EventsMethod)[keyof typeof EventsMethod];
export const EVENTS_METHODS: readonly string[] = Object.values(EventsMethod);

/** The notifications of an `events/stream` (spec §6). */
export const EventsNotification = {
  active: 'notifications/events/active',
  event: 'notifications/events/event',
  error: 'notifications/events/error',
  heartbeat: 'notifications/events/heartbeat',
  terminated: 'notifications/events/terminated',
  listChanged: 'notifications/events/list_changed',
} as const;

export type DeliveryMode = 'poll' | 'push' | 'webhook';
export const DELIVERY_MODES: readonly DeliveryMode[] = ['poll', 'push', 'webhook'];

/** The settings object under `capabilities.extensions[EVENTS_EXTENSION]` (spec V2, V3). */
export interface EventsCapability {
  listChanged?: boolean;
}

/** One event type of `events/list` (spec §3, V10, V11). */
export const EventDescriptorSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string(),
  delivery: z.array(z.enum(['poll', 'push', 'webhook'])).min(1),
  inputSchema: z.looseObject({}),
  payloadSchema: z.looseObject({}),
  _meta: z.looseObject({}).optional(),
});
/** One event type of `events/list`. */
export interface EventDescriptor {
  name: string;
  description: string;
  delivery: DeliveryMode[];
  inputSchema: Record<string, unknown>;
  payloadSchema: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export const ListEventsResultSchema = z.looseObject({
  events: z.array(EventDescriptorSchema),
  nextCursor: z.string().optional(),
});

/** One occurrence (spec §4, V20): `cursor` on push and webhook only, absent meaning null (V25). */
export const EventOccurrenceSchema = z.looseObject({
  eventId: z.string(),
  name: z.string(),
  timestamp: z.string(),
  data: z.looseObject({}),
  cursor: z.string().nullable().optional(),
  _meta: z.looseObject({}).optional(),
});
export type EventOccurrence = z.infer<typeof EventOccurrenceSchema>;

/** A cursor in requests: a string, `null` or absent (both "from now", spec V24 V25). */
const CursorParam = z.string().nullable().optional();
/** `maxAgeMs`: a whole number of ms (spec V29); anything else is refused as invalid params. */
const MaxAgeParam = z.number().int().nonnegative().optional();

/** What poll, push and webhook subscriptions share: the type, its arguments, where to start. */
export const SubscriptionParamsSchema = z.looseObject({
  name: z.string().min(1),
  arguments: z.looseObject({}).optional(),
  cursor: CursorParam,
  maxAgeMs: MaxAgeParam,
});

export const PollEventsParamsSchema = SubscriptionParamsSchema.extend({
  maxEvents: z.number().int().positive().optional(),
});
export type PollEventsParams = z.infer<typeof PollEventsParamsSchema>;

export const StreamEventsParamsSchema = SubscriptionParamsSchema;
export type StreamEventsParams = z.infer<typeof StreamEventsParamsSchema>;

/** `events/poll` result (spec §5, V36–V38). */
export const PollEventsResultSchema = z.looseObject({
  events: z.array(EventOccurrenceSchema),
  cursor: z.string().nullable().optional(),
  truncated: z.boolean(),
  hasMore: z.boolean(),
  nextPollMs: z.number(),
});
export type PollEventsResult = z.infer<typeof PollEventsResultSchema>;

/** `events/subscribe` (webhook delivery, spec §7.1); `delivery.mode` missing means webhook. */
export const SubscribeEventsParamsSchema = SubscriptionParamsSchema.extend({
  delivery: z.looseObject({
    mode: z.literal('webhook').optional(),
    url: z.string(),
    secret: z.string(),
  }),
  ttlMs: z.number().nullable().optional().catch(undefined),
});
export type SubscribeEventsParams = z.infer<typeof SubscribeEventsParamsSchema>;

export const UnsubscribeEventsParamsSchema = z.looseObject({
  name: z.string().min(1),
  arguments: z.looseObject({}).optional(),
  delivery: z.looseObject({ mode: z.literal('webhook').optional(), url: z.string() }),
});
export type UnsubscribeEventsParams = z.infer<typeof UnsubscribeEventsParamsSchema>;

/** The nested error of `notifications/events/error` and `…/terminated` (spec §6, V110). */
export interface EventsErrorBody {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/**
 * A task's event source on the 2026 extension's CreateTaskResult (Task Event Sources, EVENTS-SPEC §16.1): subscribe
 * to `name` with `input` as the `arguments`, from `initialCursor` when present.
 */
export const EventSourceSchema = z.looseObject({
  name: z.string(),
  input: z.looseObject({}),
  initialCursor: z.string().optional(),
});
export interface EventSource {
  name: string;
  input: Record<string, unknown>;
  initialCursor?: string;
}
