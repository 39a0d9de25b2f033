import {
  EventsMethod,
  ListEventsResultSchema,
  PollEventsResultSchema,
  type EventDescriptor,
} from '../protocol/index.js';
import {
  eventOf,
  followEventSource,
  type FollowContext,
  type FollowOptions,
  type TaskEvent,
} from './EventSourceFollower.js';
import { TaskProtocolError, TaskRpcError } from './TaskClientError.js';

/** One page of `events/list`. */
export interface EventTypePage {
  events: EventDescriptor[];
  nextCursor?: string;
}

/** A webhook subscription as the server granted it (`events/subscribe`'s result, EVENTS-SPEC §7.1). */
export interface WebhookGrant {
  id: string;
  refreshBefore: string | null;
  cursor: string | null;
  truncated: boolean;
  deliveryStatus?: Record<string, unknown>;
}

/** One `events/poll` answer (EVENTS-SPEC §5): only the last event carries the cursor, the one to send next. */
export interface PolledEvents {
  events: TaskEvent[];
  cursor: string | null;
  /** Events were skipped (`maxAgeMs`, or the server's replay ceiling). */
  truncated: boolean;
  /** More are ready at once: poll again without waiting. */
  hasMore: boolean;
  /** When to poll next. */
  nextPollMs: number;
}

export interface PollOptions {
  cursor?: string | null;
  maxEvents?: number;
  maxAgeMs?: number;
}

export interface WebhookOptions {
  url: string;
  /** `whsec_…` (generateWebhookSecret() makes one); the server never makes secrets (spec V61). */
  secret: string;
  cursor?: string | null;
  /** The grant asked for: omitted is the server's default, `null` no expiry (spec V75). */
  ttlMs?: number | null;
}

let open: (context: FollowContext) => EventsClient;

/** An EventsClient over a client's channel: the one way to make one. */
export function openEventsClient(context: FollowContext): EventsClient {
  return open(context);
}

/**
 * The Events extension's requests for any event type (`client.events()`): list the types, poll, stream, subscribe a
 * webhook and unsubscribe it. A refusal throws `TaskRpcError` with the server's code (EVENTS-SPEC §9).
 */
export class EventsClient {
  static {
    // Made by TaskClient.events() (openEventsClient), not by `new`: its channel is the client's own.
    open = (context) => new EventsClient(context);
  }

  private constructor(private readonly context: FollowContext) {}

  async list(cursor?: string): Promise<EventTypePage> {
    const result = await this.call(EventsMethod.list, cursor === undefined ? {} : { cursor });
    const parsed = ListEventsResultSchema.safeParse(result);
    if (!parsed.success) throw new TaskProtocolError(`Invalid events/list result: ${parsed.error.message}`);
    return parsed.data as EventTypePage;
  }

  /** One `events/poll`: the events after `cursor` (from now when null or absent, spec V24) and the cursor to send next. */
  async poll(name: string, args: Record<string, unknown>, options: PollOptions = {}): Promise<PolledEvents> {
    const result = await this.call(EventsMethod.poll, {
      name,
      arguments: args,
      cursor: options.cursor ?? null,
      ...(options.maxEvents !== undefined && { maxEvents: options.maxEvents }),
      ...(options.maxAgeMs !== undefined && { maxAgeMs: options.maxAgeMs }),
    });
    const parsed = PollEventsResultSchema.safeParse(result);
    if (!parsed.success) throw new TaskProtocolError(`Invalid events/poll result: ${parsed.error.message}`);
    const { events, cursor, truncated, hasMore, nextPollMs } = parsed.data;
    const last = events.length - 1;
    return {
      events: events.flatMap((occurrence, index) => eventOf(occurrence, index === last ? cursor : null) ?? []),
      cursor: cursor ?? null,
      truncated,
      hasMore,
      nextPollMs,
    };
  }

  /**
   * Follows a type's events on an `events/stream` (polling where push is refused), reopened from the last cursor
   * when it drops or goes silent (spec V59); ends when the server ends the subscription or `signal` aborts.
   */
  stream(
    name: string,
    args: Record<string, unknown>,
    options: FollowOptions = {},
  ): AsyncGenerator<TaskEvent, void, undefined> {
    return followEventSource(this.context, { name, input: args }, { cursor: null, ...options });
  }

  /** `events/subscribe` with webhook delivery; the server verifies the endpoint before answering (spec V101). */
  async subscribe(name: string, args: Record<string, unknown>, webhook: WebhookOptions): Promise<WebhookGrant> {
    const result = await this.call(EventsMethod.subscribe, {
      name,
      arguments: args,
      delivery: { mode: 'webhook', url: webhook.url, secret: webhook.secret },
      cursor: webhook.cursor ?? null,
      ...(webhook.ttlMs !== undefined && { ttlMs: webhook.ttlMs }),
    });
    if (typeof result['id'] !== 'string') throw new TaskProtocolError('Invalid events/subscribe result: no id');
    return result as unknown as WebhookGrant;
  }

  /** `events/unsubscribe` by the subscription's key (spec V108); a TaskRpcError (not found) when there is none. */
  async unsubscribe(name: string, args: Record<string, unknown>, url: string): Promise<void> {
    await this.call(EventsMethod.unsubscribe, { name, arguments: args, delivery: { mode: 'webhook', url } });
  }

  private async call(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const reply = await this.context.raw.request(method, { ...params, _meta: this.context.envelope() }).reply;
    if (!reply.ok) throw new TaskRpcError(reply.error);
    return reply.result;
  }
}
