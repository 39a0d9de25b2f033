import type { EngineLogger, TaskEngine, TaskRecord } from '../engine/index.js';
import type {
  Answerer,
  DialectAnswer,
  DialectContext,
  Decoration,
  ServerDialect,
  SessionView,
} from '../dialects/index.js';
import { ErrorCodes, isObject, paramsOf, RpcError, type JsonRpcRequest } from '../rpc/index.js';
import {
  CLIENT_CAPABILITIES_META,
  EVENTS_EXTENSION,
  EVENTS_METHODS,
  EventsMethod,
  ExtMethod,
  PollEventsParamsSchema,
  ResultType,
  StreamEventsParamsSchema,
  SubscribeEventsParamsSchema,
  TasksStreamMethod,
  TasksStreamParamsSchema,
  type DeliveryMode,
  type EventSource,
  type EventsCapability,
} from '../protocol/index.js';
import { EventCatalog, type EventTypeOptions } from './EventCatalog.js';
import { publishToWebhooks, type WebhookPublishing } from './publishToWebhooks.js';
import { ConformanceControls } from './ConformanceControls.js';
import { conformanceHost } from './conformanceHost.js';
import { EmittedEvents, type EmitEventOptions } from './EmittedEvents.js';
import { EmittedEventsFront } from './EmittedEventsFront.js';
import { DEFAULT_SUBSCRIPTIONS_PER_TYPE, SubscriptionQuota } from './SubscriptionQuota.js';
import { StreamControls } from './StreamControls.js';
import { StreamCounts } from './StreamCounts.js';
import { startWebhookSubscription } from './startWebhookSubscription.js';
import { streamTaskEvents } from './streamTaskEvents.js';
import { streamTaskLog, taskStreamEnd, type TaskStreamEnd } from './streamTaskLog.js';
import { encodeTaskEventCursor } from './taskEventCursor.js';
import { taskEventOccurrence } from './taskEventOccurrence.js';
import { taskEndedError, TaskEventSubscription } from './TaskEventSubscription.js';
import type { WebhookDeliveries } from './webhooks/WebhookDeliveries.js';
import { webhookRefusal } from './webhookRefusal.js';
import { parse } from './parseEventParams.js';
import { unsubscribeTaskEvents } from './unsubscribeTaskEvents.js';
import { DEFAULT_REVERIFY_MS, EventAccess, type EventAuthorizer } from './EventAccess.js';

/** Serving the Events extension (docs/events.md). */
export interface EventsOptions {
  /** The event types tasks' work may emit (besides the runtime's task status type). */
  types?: readonly EventTypeOptions[];
  /**
   * Webhook delivery (`events/subscribe`), when configured: without it types offer poll and push only, and
   * `events/subscribe` answers -32014 (spec V12).
   */
  webhooks?: WebhookDeliveries;
  /**
   * May an authenticated principal receive events of a type with given arguments (spec V64)? Asked at every
   * `events/poll`, `events/stream` and `events/subscribe` (a refusal is -32012), and again at most every `reverifyMs`
   * while a push stream or a task's webhook subscription lives (V65: a refusal ends it with `terminated`, -32012).
   * Default: every principal may receive every type (task-scoped types only ever serve the caller's own tasks).
   */
  authorize?: EventAuthorizer;
  /** How often live subscriptions are re-verified with `authorize`. Default 60 s. */
  reverifyMs?: number;
  /** Concurrent `events/stream`s one caller may hold (spec TS13). Default 100. */
  maxStreamsPerOwner?: number;
  /** Concurrent `events/stream`s in this process, every caller together. Default 10,000. */
  maxStreams?: number;
  /** Heartbeat interval of a push stream (spec V52). Default 15 s. */
  heartbeatMs?: number;
  /** Most events one `events/poll` returns (and the cap of its `maxEvents`, spec V38). Default 100. */
  maxPollEvents?: number;
  /** Webhook subscriptions one principal may hold to one type (spec V115), unless the type sets its own. Default 100. */
  maxSubscriptionsPerType?: number;
  /**
   * Serve SEP-2694's `tasks/stream` (a draft overlapping task event sources) from the same event logs, on every wire.
   * Default false: `tasks/stream` answers -32601 (spec TE1). Its streams count toward the same per-caller bound.
   */
  taskStreams?: boolean;
  /**
   * Serve the conformance suite's diagnostic control tools (`events_conformance_*`, EVENTS-SPEC §14) to every caller:
   * for a test fixture only. Default false.
   */
  conformanceControls?: boolean;
}

const DEFAULTS = {
  maxStreamsPerOwner: 100,
  maxStreams: 10_000,
  heartbeatMs: 15_000,
  maxPollEvents: 100,
};
/** Wakes are hints: a stream re-reads the store at least this often. */
const RECHECK_MS = 5_000;

const COMPLETE = { resultType: ResultType.complete } as const;

/**
 * The Events extension `io.modelcontextprotocol/events` on the 2026-07-28 wire, for task-backed event types: one more
 * claimer in the runtime's dialect list (RequestRouter). It answers `events/*` (poll, push on the request's stream,
 * webhook through `WebhookDeliveries`), declares the extension in `server/discover`, and names a task's event source
 * for its CreateTaskResult. Every read is scoped to the caller: another caller's task reads as a missing one.
 */
export class EventsFront implements ServerDialect {
  readonly catalog: EventCatalog;
  private readonly options: typeof DEFAULTS;
  private readonly streams: StreamCounts;
  /** The live streams by type, and the §14 control tools over them (only with `conformanceControls`). */
  private readonly streamControls: StreamControls | undefined;
  private readonly controls: ConformanceControls | undefined;
  /** `tasks/stream`s open, by connection and task (spec TE6). */
  private readonly taskStreamsOpen = new Set<string>();
  private publishing: WebhookPublishing | undefined;
  private logger: EngineLogger | undefined;
  private engine: TaskEngine | undefined;
  /** The untasked types' events (`taskScoped: false`), and their serving. */
  private readonly emitted: EmittedEvents;
  private readonly emittedFront: EmittedEventsFront;
  private readonly quota: SubscriptionQuota | undefined;
  private readonly onSubscribed: ((owner: string, id: string) => void) | undefined;
  private readonly access: EventAccess;

  constructor(private readonly eventsOptions: EventsOptions = {}) {
    const delivery: DeliveryMode[] = eventsOptions.webhooks ? ['poll', 'push', 'webhook'] : ['poll', 'push'];
    this.catalog = new EventCatalog(eventsOptions.types ?? [], delivery);
    this.options = {
      maxStreamsPerOwner: eventsOptions.maxStreamsPerOwner ?? DEFAULTS.maxStreamsPerOwner,
      maxStreams: eventsOptions.maxStreams ?? DEFAULTS.maxStreams,
      heartbeatMs: eventsOptions.heartbeatMs ?? DEFAULTS.heartbeatMs,
      maxPollEvents: eventsOptions.maxPollEvents ?? DEFAULTS.maxPollEvents,
    };
    this.streams = new StreamCounts(this.options.maxStreamsPerOwner, this.options.maxStreams);
    this.access = new EventAccess(eventsOptions.authorize, eventsOptions.reverifyMs ?? DEFAULT_REVERIFY_MS);
    const webhooks = eventsOptions.webhooks;
    this.quota = webhooks
      ? new SubscriptionQuota(
          this.catalog,
          webhooks,
          eventsOptions.maxSubscriptionsPerType ?? DEFAULT_SUBSCRIPTIONS_PER_TYPE,
        )
      : undefined;
    this.emitted = new EmittedEvents(
      this.catalog,
      webhooks,
      () => this.engine?.limits.maxEventBytes ?? 64 * 1024,
      () => this.logger,
    );
    if (eventsOptions.conformanceControls) this.streamControls = new StreamControls();
    this.emittedFront = new EmittedEventsFront({
      catalog: this.catalog,
      emitted: this.emitted,
      webhooks,
      quota: this.quota,
      streams: this.streams,
      controls: this.streamControls,
      access: this.access,
      maxPollEvents: this.options.maxPollEvents,
      heartbeatMs: this.options.heartbeatMs,
      onSubscribed: (owner, id) => this.onSubscribed?.(owner, id),
    });
    if (this.streamControls) {
      const host = conformanceHost({
        catalog: this.catalog,
        emitted: this.emitted,
        emittedFront: this.emittedFront,
        streams: this.streamControls,
        webhooks,
        quota: this.quota,
      });
      this.onSubscribed = host.subscribed;
      this.controls = new ConformanceControls(this.streamControls, webhooks, host);
    }
  }

  /** `tasks.emitEvent`: an event of an untasked type from the author's code (EmittedEvents.emit). */
  emit(name: string, data: Record<string, unknown>, options?: EmitEventOptions): Promise<string> {
    return this.emitted.emit(name, data, options);
  }

  /**
   * Publishes the task events appended in this process to the configured webhook deliveries (none without them).
   * Returns the removal.
   */
  attach(engine: TaskEngine, logger: EngineLogger): () => void {
    this.logger = logger;
    this.engine = engine;
    this.emitted.useStore(engine.store);
    const webhooks = this.eventsOptions.webhooks;
    if (!webhooks) return () => this.emitted.close();
    const publishing = publishToWebhooks(engine, webhooks, this.catalog.names, logger, this.access);
    this.publishing = publishing;
    return () => {
      publishing.stop();
      this.emitted.close();
    };
  }

  /** spec §1: events exist on the 2026-07-28 wire only; a 2025-era session's `events/*` goes on to -32601 (V7). */
  answererFor(request: JsonRpcRequest, session: SessionView): Answerer | undefined {
    const controls = this.controls;
    if (controls && request.method === 'tools/call' && controls.has(paramsOf(request)?.['name'])) {
      const done = session.modern ? COMPLETE : {};
      return {
        operation: 'retrieve',
        plainCall: true,
        answer: async (r) => {
          const params = paramsOf(r) ?? {};
          const text = await controls.run(String(params['name']), params['arguments']);
          return { result: { content: [{ type: 'text', text }], ...done } };
        },
      };
    }
    if (request.method === TasksStreamMethod) {
      // spec TE1: off by default, and then left to the SDK server's -32601.
      if (!this.eventsOptions.taskStreams) return undefined;
      const end = taskStreamEnd(session.modern);
      return { operation: 'retrieve', plainCall: true, answer: (r, ctx) => this.taskStream(r, ctx, end) };
    }
    if (!session.modern || !EVENTS_METHODS.includes(request.method)) return undefined;
    // spec V58: a stream is exempt from the task rate limits; its own bound is the per-caller stream count.
    return { operation: 'retrieve', plainCall: true, answer: (r, ctx) => this.answer(r, ctx) };
  }

  /** spec V2 V3: the extension as an object under `capabilities.extensions` of `server/discover`. */
  decorate(request: JsonRpcRequest, session: SessionView): Decoration | undefined {
    const controls = this.controls;
    if (controls && request.method === 'tools/list')
      // On the last page: the controls are listed once.
      return (result) =>
        Array.isArray(result['tools']) && result['nextCursor'] === undefined
          ? { ...result, tools: [...(result['tools'] as unknown[]), ...controls.tools] }
          : result;
    if (!session.modern || request.method !== ExtMethod.discover) return undefined;
    const settings: EventsCapability = { listChanged: false }; // spec V4: the catalog is fixed at start-up
    return (result) => {
      const capabilities = isObject(result['capabilities']) ? result['capabilities'] : {};
      const extensions = isObject(capabilities['extensions']) ? capabilities['extensions'] : {};
      return {
        ...result,
        capabilities: { ...capabilities, extensions: { ...extensions, [EVENTS_EXTENSION]: settings } },
      };
    };
  }

  /**
   * The `eventSource` of a task's CreateTaskResult (Task Event Sources): only when this request's client capabilities
   * declare Events (spec TS1) and a registered type names the tool (TS6). `initialCursor` is the log's start, where
   * the task's first event lands, so a late subscriber misses nothing (TS5).
   */
  eventSourceFor(record: TaskRecord, params: Record<string, unknown>): EventSource | undefined {
    const meta = isObject(params['_meta']) ? params['_meta'] : {};
    const capabilities = isObject(meta[CLIENT_CAPABILITIES_META]) ? meta[CLIENT_CAPABILITIES_META] : {};
    const extensions = isObject(capabilities['extensions']) ? capabilities['extensions'] : {};
    if (!isObject(extensions[EVENTS_EXTENSION])) return undefined;
    const tool = params['name'];
    const name = typeof tool === 'string' ? this.catalog.sourceFor(tool) : undefined;
    if (!name) return undefined;
    return { name, input: { taskId: record.taskId }, initialCursor: encodeTaskEventCursor(record.taskId, 0) };
  }

  private async answer(request: JsonRpcRequest, ctx: DialectContext): Promise<DialectAnswer> {
    const params = paramsOf(request);
    if (!params) throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: params must be an object');
    const name = request.method === EventsMethod.list ? undefined : params['name'];
    // spec V64: an authenticated caller's access to a known type, before anything of it is served.
    if (typeof name === 'string' && this.catalog.has(name) && request.method !== EventsMethod.unsubscribe)
      await this.access.check(ctx.caller, name, params['arguments']);
    if (typeof name === 'string' && this.catalog.isUntasked(name))
      return this.emittedFront.answer(request, params, ctx);
    switch (request.method) {
      case EventsMethod.list:
        return { result: { ...this.catalog.page(params['cursor']), ...COMPLETE } };
      case EventsMethod.poll:
        return this.poll(params, ctx);
      case EventsMethod.stream:
        return this.stream(request, params, ctx);
      case EventsMethod.subscribe:
        return this.subscribe(params, ctx);
      default:
        return unsubscribeTaskEvents(this.catalog, this.eventsOptions.webhooks, params, ctx.caller);
    }
  }

  /** spec §5: one self-contained request per poll (V35, V39); a terminal task's last poll answers its ending (§16.4). */
  private async poll(params: Record<string, unknown>, ctx: DialectContext): Promise<DialectAnswer> {
    const parsed = parse(PollEventsParamsSchema, params);
    const subscription = await TaskEventSubscription.open(ctx.engine, this.catalog, ctx.caller.scope, parsed, 'poll');
    const max = Math.min(parsed.maxEvents ?? this.options.maxPollEvents, this.options.maxPollEvents);
    const { events, more } = await subscription.next(max);
    // §16.4: retained events are served until the cursor reaches the end; then the poll answers the ending.
    if (events.length === 0 && !more) {
      const state = await subscription.state(ctx.engine.clock);
      if (!state || state.ended) {
        const ended = taskEndedError(subscription.taskId, state?.task);
        throw new RpcError(ended.code, ended.message, ended.data);
      }
    }
    const task = await ctx.engine.get(ctx.caller.scope, subscription.taskId).catch(() => undefined);
    return {
      result: {
        // spec V36: always an array.
        events: events.map((event) => taskEventOccurrence(subscription.taskId, event)),
        cursor: subscription.cursor,
        truncated: subscription.truncated,
        hasMore: more,
        nextPollMs: task?.pollIntervalMs ?? 1000,
        ...COMPLETE,
      },
    };
  }

  private async stream(
    request: JsonRpcRequest,
    params: Record<string, unknown>,
    ctx: DialectContext,
  ): Promise<DialectAnswer> {
    const parsed = parse(StreamEventsParamsSchema, params);
    // spec V44 V115: every refusal comes before the stream opens.
    const subscription = await TaskEventSubscription.open(ctx.engine, this.catalog, ctx.caller.scope, parsed, 'push');
    const release = this.streams.take(ctx.caller.owner);
    try {
      return await streamTaskEvents(
        ctx.engine,
        subscription,
        request,
        ctx,
        { heartbeatMs: this.options.heartbeatMs, recheckMs: RECHECK_MS },
        (error) =>
          this.logger?.warn(
            { taskId: subscription.taskId, error: String(error) },
            'events/stream: the event log could not be read',
          ),
        this.streamControls,
        this.access.forStream(ctx.caller, parsed.name, parsed.arguments),
      );
    } finally {
      release();
    }
  }

  /**
   * SEP-2694 `tasks/stream`: params checked (TE9), one stream per task per connection (TE6: a second is -32602), the
   * per-caller stream bound (TE17), then the task's log from `after` (streamTaskLog).
   */
  private async taskStream(request: JsonRpcRequest, ctx: DialectContext, end: TaskStreamEnd): Promise<DialectAnswer> {
    const params = parse(TasksStreamParamsSchema, paramsOf(request) ?? {});
    const key = `${ctx.connectionId}\u0000${params.taskId}`;
    if (this.taskStreamsOpen.has(key))
      throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: this task is streamed on this connection already');
    const release = this.streams.take(ctx.caller.owner);
    this.taskStreamsOpen.add(key);
    try {
      return await streamTaskLog(ctx.engine, params, ctx, end, RECHECK_MS);
    } finally {
      this.taskStreamsOpen.delete(key);
      release();
    }
  }

  /** spec §7: webhook delivery, by the configured WebhookDeliveries; without one the mode is not offered (-32014). */
  private async subscribe(params: Record<string, unknown>, ctx: DialectContext): Promise<DialectAnswer> {
    const { caller, engine } = ctx;
    const parsed = parse(SubscribeEventsParamsSchema, params);
    const subscription = await TaskEventSubscription.open(engine, this.catalog, caller.scope, parsed, 'webhook');
    const webhooks = this.eventsOptions.webhooks as WebhookDeliveries;
    const owner = caller.authenticated ? caller.owner : undefined;
    const key = { owner, name: parsed.name, arguments: { taskId: subscription.taskId }, url: parsed.delivery.url };
    const subscribe = () =>
      webhookRefusal(() =>
        webhooks.subscribe({
          ...key,
          secret: parsed.delivery.secret,
          ...(parsed.ttlMs !== undefined && { ttlMs: parsed.ttlMs }),
          scope: subscription.taskId,
          cursor: subscription.cursor,
          truncated: subscription.truncated,
        }),
      );
    const subscribed = await (this.quota as SubscriptionQuota).within(key, subscribe); // spec V115
    if (owner !== undefined) this.onSubscribed?.(owner, subscribed.id);
    // The replay from the cursor goes to this subscription only; a task that ended already ends it after. A refresh
    // (spec V68) replays from the host's cursor too: what is queued is not queued twice, so it brings only what the
    // subscription never got (an event or an ending whose outbox row a crash lost, or that a process publishing
    // nothing appended), each under its own webhook-id; an ending subscription takes nothing more.
    if (owner !== undefined)
      await this.inPublishingOrder(subscription.taskId, () =>
        startWebhookSubscription(engine, webhooks, subscription, owner, subscribed.id),
      );
    const { created: _created, ...result } = subscribed;
    return { result: { ...result, ...COMPLETE } };
  }

  /** Runs a new subscription's start in its task's publishing order (WebhookPublishing.serialized), when attached. */
  private inPublishingOrder(taskId: string, work: () => Promise<void>): Promise<void> {
    return this.publishing ? this.publishing.serialized(taskId, work) : work();
  }
}
