import type { Caller, DialectAnswer, DialectContext } from '../dialects/index.js';
import { ErrorCodes, RpcError, type JsonRpcRequest } from '../rpc/index.js';
import {
  EventsMethod,
  PollEventsParamsSchema,
  ResultType,
  StreamEventsParamsSchema,
  SubscribeEventsParamsSchema,
  UnsubscribeEventsParamsSchema,
  type DeliveryMode,
} from '../protocol/index.js';
import { parse } from './parseEventParams.js';
import type { EventCatalog } from './EventCatalog.js';
import type { EmittedEvents } from './EmittedEvents.js';
import { EmitSubscription, emittedOccurrence } from './EmitSubscription.js';
import type { StreamControls } from './StreamControls.js';
import type { StreamCounts } from './StreamCounts.js';
import { streamEmittedEvents } from './streamEmittedEvents.js';
import type { SubscriptionQuota } from './SubscriptionQuota.js';
import type { SubscriptionRequest } from './TaskEventSubscription.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';
import { webhookRefusal } from './webhookRefusal.js';
import type { EventAccess } from './EventAccess.js';

const COMPLETE = { resultType: ResultType.complete } as const;
/** The poll interval advised for an untasked type (spec V37). */
const NEXT_POLL_MS = 1_000;

/** What serving the untasked types needs of the events front. */
export interface EmittedServing {
  catalog: EventCatalog;
  emitted: EmittedEvents;
  webhooks: WebhookDeliveries | undefined;
  quota: SubscriptionQuota | undefined;
  streams: StreamCounts;
  controls: StreamControls | undefined;
  /** The operator's event authorization: re-verified while a push stream lives (spec V65). */
  access?: EventAccess;
  maxPollEvents: number;
  heartbeatMs: number;
  /** Told of every subscription created or refreshed (the conformance controls look them up by id). */
  onSubscribed?: (owner: string, id: string) => void;
}

/** A webhook subscribe to an untasked type, after the wire checks. */
export interface EmittedSubscribe extends SubscriptionRequest {
  delivery: { url: string; secret: string };
  ttlMs?: number | null | undefined;
}

/**
 * `events/poll`, `events/stream`, `events/subscribe` and `events/unsubscribe` for the untasked types (docs/events.md):
 * read from the type's ring in this process, with the caller as reader (an event addressed to another principal is
 * never served to it, on any path), and webhooks through the configured deliveries.
 */
export class EmittedEventsFront {
  constructor(private readonly serving: EmittedServing) {}

  /** Answers an `events/*` request naming an untasked type. */
  async answer(request: JsonRpcRequest, params: Record<string, unknown>, ctx: DialectContext): Promise<DialectAnswer> {
    switch (request.method) {
      case EventsMethod.poll:
        return await this.poll(parse(PollEventsParamsSchema, params), ctx.caller);
      case EventsMethod.stream:
        return this.stream(request, parse(StreamEventsParamsSchema, params), ctx);
      case EventsMethod.subscribe:
        return this.subscribe(parse(SubscribeEventsParamsSchema, params), ctx.caller);
      default:
        return this.unsubscribe(parse(UnsubscribeEventsParamsSchema, params), ctx.caller);
    }
  }

  /** spec §5: one self-contained request per poll (V35, V39). */
  async poll(
    request: SubscriptionRequest & { maxEvents?: number | undefined },
    caller: Caller,
  ): Promise<DialectAnswer> {
    const subscription = await this.open(request, caller, 'poll');
    const max = Math.min(request.maxEvents ?? this.serving.maxPollEvents, this.serving.maxPollEvents);
    const { events, more, gap } = subscription.next(max);
    return {
      result: {
        events: events.map((entry) => entry.occurrence), // spec V36: always an array
        cursor: subscription.cursor,
        truncated: subscription.truncated || gap, // spec V32 V33: never an error
        hasMore: more,
        nextPollMs: NEXT_POLL_MS,
        ...COMPLETE,
      },
    };
  }

  /** spec §6; every refusal comes before the stream opens (V44, V115). */
  async stream(request: JsonRpcRequest, parsed: SubscriptionRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const subscription = await this.open(parsed, ctx.caller, 'push');
    const release = this.serving.streams.take(ctx.caller.owner);
    try {
      return await streamEmittedEvents(
        subscription,
        request,
        ctx,
        { heartbeatMs: this.serving.heartbeatMs },
        Date.now,
        this.serving.controls,
        this.serving.access?.forStream(ctx.caller, parsed.name, parsed.arguments),
      );
    } finally {
      release();
    }
  }

  /** spec §7 for an untasked type: the subscription takes every event of the type its principal may see. */
  async subscribe(parsed: EmittedSubscribe, caller: Caller): Promise<DialectAnswer> {
    return { result: { ...(await this.subscribeAs(authenticated(caller), parsed)), ...COMPLETE } };
  }

  /** Subscribes for `owner` (the caller's principal, or the conformance control's); answers the result body. */
  async subscribeAs(owner: string | undefined, parsed: EmittedSubscribe): Promise<Record<string, unknown>> {
    const { webhooks, quota } = this.serving;
    const subscription = await this.open(parsed, undefined, 'webhook', owner);
    const hooks = webhooks as WebhookDeliveries;
    const key = { owner, name: parsed.name, arguments: {}, url: parsed.delivery.url };
    const subscribe = () =>
      webhookRefusal(() =>
        hooks.subscribe({
          ...key,
          secret: parsed.delivery.secret,
          ...(parsed.ttlMs !== undefined && { ttlMs: parsed.ttlMs }),
          scope: null,
          cursor: subscription.cursor,
          truncated: subscription.truncated,
        }),
      );
    const subscribed = await (quota ? quota.within(key, subscribe) : subscribe());
    if (owner !== undefined) this.serving.onSubscribed?.(owner, subscribed.id);
    if (subscribed.created && owner !== undefined) {
      // The replay from the cursor goes to this subscription only.
      const ring = subscription.ring;
      const { events } = subscription.next(Number.MAX_SAFE_INTEGER);
      if (events.length > 0)
        await hooks.publishTo(
          owner,
          subscribed.id,
          events.map((entry) => ({
            occurrence: entry.occurrence,
            owner: entry.owner,
            scope: null,
            cursor: emittedOccurrence(ring, entry).cursor ?? null,
          })),
        );
    }
    const { created: _created, ...result } = subscribed;
    return result;
  }

  /** spec V108 V109: by the same key, the principal from auth. */
  async unsubscribe(
    parsed: { name: string; arguments?: Record<string, unknown> | undefined; delivery: { url: string } },
    caller: Caller,
  ): Promise<DialectAnswer> {
    this.serving.catalog.noArguments(parsed.arguments);
    this.offered(parsed.name, 'webhook');
    const webhooks = this.serving.webhooks as WebhookDeliveries;
    await webhookRefusal(() =>
      webhooks.unsubscribe({
        owner: authenticated(caller),
        name: parsed.name,
        arguments: {},
        url: parsed.delivery.url,
      }),
    );
    return { result: { ...COMPLETE } };
  }

  /** The checks every mode makes first (spec V40, V44): a mode the type offers (-32014), no arguments (-32602). */
  private async open(
    request: SubscriptionRequest,
    caller: Caller | undefined,
    mode: DeliveryMode,
    reader = caller ? authenticated(caller) : undefined,
  ): Promise<EmitSubscription> {
    this.offered(request.name, mode);
    this.serving.catalog.noArguments(request.arguments);
    const ring = await this.serving.emitted.source(request.name);
    return EmitSubscription.open(ring, reader, request, Date.now());
  }

  private offered(name: string, mode: DeliveryMode): void {
    if (!this.serving.catalog.offers(name, mode))
      throw new RpcError(ErrorCodes.EVENTS_UNSUPPORTED, `Event type ${name} does not offer ${mode} delivery`, {
        feature: 'deliveryMode',
        value: mode,
      });
  }
}

/** The principal events may be addressed to: an authenticated caller's owner only. */
function authenticated(caller: Caller): string | undefined {
  return caller.authenticated ? caller.owner : undefined;
}
