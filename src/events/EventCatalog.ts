import * as z from 'zod';

import { TASK_PROGRESS_EVENT, TASK_STATUS_EVENT, TaskEventRejectedError } from '../engine/index.js';
import { ErrorCodes, RpcError } from '../rpc/index.js';
import { EVENT_SOURCE_TOOLS_META, type DeliveryMode, type EventDescriptor } from '../protocol/index.js';

/**
 * An event type a server author registers: what a task's work may emit with `step.emit` or `emitTaskEvent`, or, with
 * `taskScoped: false`, what the author's code emits with `tasks.emitEvent` (no task behind it).
 */
export interface EventTypeOptions {
  /** Unique; vendor-prefixed (`com.example.stage_result`): unprefixed names are reserved for MCP (spec TE3). */
  name: string;
  /** When it fires (spec V10). */
  description: string;
  /** JSON Schema of the event's `data` (an object schema); every emit is checked against it (spec V21). */
  payloadSchema: Record<string, unknown>;
  /**
   * Tools whose tasks emit this type: their CreateTaskResult on the 2026 extension names it as the task's
   * `eventSource` when the requestor declared Events (spec TS1, TS6). A tool takes the first type naming it. A list
   * is also written in the type's descriptor (`_meta["io.github.mcp-tasks/tools"]`, for a proxy in front); a
   * predicate, asked at each task's creation, is for a set of tools known only as they are called.
   */
  tools?: readonly string[] | ((tool: string) => boolean);
  _meta?: Record<string, unknown>;
  /**
   * Default true: subscriptions name a task (`{ taskId }`). False: the type is not tied to a task; it takes no
   * arguments, the author's code emits it with `tasks.emitEvent`, and the process keeps its last events (`retain`).
   */
  taskScoped?: boolean;
  /** The modes it offers, of those the server serves (webhook only with `events.webhooks`). Default: all of them. */
  delivery?: readonly DeliveryMode[];
  /**
   * An untasked type's replay window: the last `events` (default 1,000) no older than `maxAgeMs` (1 h). By default
   * each process keeps its own (cursors end with a restart). `durable: true` keeps them in the task store instead:
   * every instance and queue worker shares one numbering, and cursors stay valid across restarts.
   */
  retain?: { events?: number; maxAgeMs?: number; durable?: boolean };
  /** Webhook subscriptions one principal may hold to this type (default `events.maxSubscriptionsPerType`, 100). */
  maxSubscriptions?: number;
}

/** The subscription arguments of an untasked type: none. */
export const UNTASKED_INPUT_SCHEMA = { type: 'object', properties: {}, additionalProperties: false } as const;

/** The subscription arguments of every task-backed type: the task (spec TS2, TS3). */
export const TASK_SCOPED_INPUT_SCHEMA = {
  type: 'object',
  properties: { taskId: { type: 'string', description: 'The task whose events to deliver' } },
  required: ['taskId'],
  additionalProperties: false,
} as const;

const STATUS_PAYLOAD_SCHEMA = {
  type: 'object',
  properties: {
    taskId: { type: 'string' },
    status: { type: 'string', enum: ['working', 'input_required', 'completed', 'failed', 'cancelled'] },
    statusMessage: { type: 'string' },
  },
  required: ['taskId', 'status'],
};

/** The runtime's own type: each status change of a task, so a backend learns of completion without polling. */
const STATUS_TYPE: EventTypeOptions = {
  name: TASK_STATUS_EVENT,
  description: "A task's status changed (working, input_required, or a terminal status: completed, failed, cancelled)",
  payloadSchema: STATUS_PAYLOAD_SCHEMA,
};

/**
 * The runtime's progress type: a task's progress reports, coalesced to one a second and bounded to half the task's
 * log (TaskEvents.recordProgress), where the 2026 tasks extension sends no progress notifications.
 */
const PROGRESS_TYPE: EventTypeOptions = {
  name: TASK_PROGRESS_EVENT,
  description: "A task's work reported progress (at most one a second per task: the latest report of each second)",
  payloadSchema: {
    type: 'object',
    properties: {
      taskId: { type: 'string' },
      progress: { type: 'number' },
      total: { type: 'number' },
      message: { type: 'string' },
    },
    required: ['taskId', 'progress'],
  },
};

/** The types the runtime records itself: no work may emit them. */
const RUNTIME_TYPES: ReadonlySet<string> = new Set([TASK_STATUS_EVENT, TASK_PROGRESS_EVENT]);

/** Types listed per `events/list` page (spec V13). */
export const EVENT_TYPES_PAGE_SIZE = 100;

interface CompiledType {
  options: EventTypeOptions;
  payload: z.ZodType;
}

const taskArguments = z.strictObject({ taskId: z.string().min(1) });
const noArguments = z.strictObject({});

/**
 * The event types a server offers: the author's, and the runtime's task status and progress types; sorted by name so `events/list`
 * keeps one order (spec V13, §3 practice). Each payloadSchema is compiled once, at start-up: a schema that cannot be
 * compiled fails there, not at the first emit.
 */
export class EventCatalog {
  private readonly types = new Map<string, CompiledType>();
  private readonly sorted: string[];

  constructor(
    types: readonly EventTypeOptions[],
    /** The modes every type offers: poll and push always, webhook when webhook delivery is configured. */
    readonly delivery: readonly DeliveryMode[],
  ) {
    for (const options of [...types, STATUS_TYPE, PROGRESS_TYPE]) {
      if (typeof options.name !== 'string' || options.name.length === 0)
        throw new TypeError('An event type needs a non-empty name');
      if (this.types.has(options.name)) throw new TypeError(`Event type ${options.name} is registered twice`);
      let payload: z.ZodType;
      try {
        payload = z.fromJSONSchema(options.payloadSchema as never);
      } catch (error) {
        throw new TypeError(`The payloadSchema of event type ${options.name} cannot be used: ${String(error)}`);
      }
      if (options.delivery?.some((mode) => !['poll', 'push', 'webhook'].includes(mode)))
        throw new TypeError(`Event type ${options.name} lists an unknown delivery mode`);
      if (options.taskScoped === false && (typeof options.tools === 'function' || options.tools?.length))
        throw new TypeError(`Event type ${options.name} is not task-scoped: no tool's tasks can name it`);
      const { retain, maxSubscriptions } = options;
      const count = (value: number | undefined, min: number) =>
        value === undefined || (Number.isSafeInteger(value) && value >= min);
      if (!count(retain?.events, 1) || !count(retain?.maxAgeMs, 1) || !count(maxSubscriptions, 0))
        throw new TypeError(`Event type ${options.name}: retain and maxSubscriptions take non-negative integers`);
      if (retain?.durable !== undefined && typeof retain.durable !== 'boolean')
        throw new TypeError(`Event type ${options.name}: retain.durable is true or false`);
      this.types.set(options.name, { options, payload });
    }
    this.sorted = [...this.types.keys()].sort();
    for (const name of this.sorted)
      if (this.modesOf(name).length === 0)
        throw new TypeError(`Event type ${name} offers none of the modes served (${delivery.join(', ')})`); // spec V11
  }

  /** Every type's name, sorted. */
  get names(): readonly string[] {
    return this.sorted;
  }

  has(name: string): boolean {
    return this.types.has(name);
  }

  /** Whether `name` is a registered type tied to no task (emitted with `tasks.emitEvent`). */
  isUntasked(name: string): boolean {
    return this.types.get(name)?.options.taskScoped === false;
  }

  /** Whether an untasked type keeps its events in the task store (`retain.durable`). */
  durable(name: string): boolean {
    return this.optionsOf(name)?.retain?.durable === true;
  }

  /** The names of the untasked types. */
  get untasked(): readonly string[] {
    return this.sorted.filter((name) => this.isUntasked(name));
  }

  /** The modes `name` offers: its own `delivery` among those the server serves (spec V11, V12). */
  modesOf(name: string): DeliveryMode[] {
    const own = this.types.get(name)?.options.delivery;
    return this.delivery.filter((mode) => !own || own.includes(mode));
  }

  /** Whether `name` offers `mode` (spec V12: else -32014). */
  offers(name: string, mode: DeliveryMode): boolean {
    return this.modesOf(name).includes(mode);
  }

  /** The options `name` was registered with. */
  optionsOf(name: string): EventTypeOptions | undefined {
    return this.types.get(name)?.options;
  }

  /** The engine's `checkEvent`: a registered task type (not the runtime's own) and data its payloadSchema accepts. */
  readonly check = (type: string, data: Record<string, unknown>): void => {
    const known = this.types.get(type);
    if (!known || RUNTIME_TYPES.has(type) || known.options.taskScoped === false)
      throw new TaskEventRejectedError('unknown_type', `Event type ${type} is not registered for tasks`);
    this.checkData(type, known, data);
  };

  /** What `tasks.emitEvent` checks: a registered untasked type and data its payloadSchema accepts (spec V21). */
  checkUntasked(type: string, data: Record<string, unknown>): void {
    const known = this.types.get(type);
    if (!known || known.options.taskScoped !== false)
      throw new TaskEventRejectedError('unknown_type', `Event type ${type} is not a registered untasked type`);
    this.checkData(type, known, data);
  }

  private checkData(type: string, known: CompiledType, data: Record<string, unknown>): void {
    const parsed = known.payload.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
      throw new TaskEventRejectedError(
        'invalid_payload',
        `Event data of ${type} does not match its payloadSchema${where}: ${issue?.message ?? 'invalid'}`,
      );
    }
  }

  /** The descriptor of `name` (spec V10, V11). */
  descriptor(name: string): EventDescriptor {
    const { options } = this.types.get(name) as CompiledType;
    // Which tools' tasks name it: a proxy in front names the same source on its tasks of those tools.
    const listed = typeof options.tools === 'function' ? undefined : options.tools;
    const tools = listed?.length ? { [EVENT_SOURCE_TOOLS_META]: [...listed] } : undefined;
    return {
      name: options.name,
      description: options.description,
      delivery: this.modesOf(name),
      inputSchema: options.taskScoped === false ? { ...UNTASKED_INPUT_SCHEMA } : { ...TASK_SCOPED_INPUT_SCHEMA },
      payloadSchema: options.payloadSchema,
      ...((options._meta || tools) && { _meta: { ...options._meta, ...tools } }),
    };
  }

  /** One page of descriptors (spec V13): `nextCursor` only when more remain; a cursor not ours is -32602. */
  page(cursor: unknown): { events: EventDescriptor[]; nextCursor?: string } {
    let offset = 0;
    if (cursor !== undefined && cursor !== null) {
      const decoded = typeof cursor === 'string' ? /^t(\d{1,6})$/.exec(cursor) : null;
      offset = decoded ? Number(decoded[1]) : -1;
      if (offset < 0 || offset > this.sorted.length) throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid cursor');
    }
    const names = this.sorted.slice(offset, offset + EVENT_TYPES_PAGE_SIZE);
    const next = offset + names.length;
    return {
      events: names.map((name) => this.descriptor(name)),
      ...(next < this.sorted.length && { nextCursor: `t${next}` }),
    };
  }

  /** The subscription arguments of a task-backed type: `{ taskId }` and nothing else (spec V40: else -32602). */
  taskOf(args: Record<string, unknown> | undefined): string {
    const parsed = taskArguments.safeParse(args ?? {});
    if (!parsed.success)
      throw new RpcError(
        ErrorCodes.INVALID_PARAMS,
        'Invalid params: arguments must be { taskId: string } (the inputSchema of every task event type)',
      );
    return parsed.data.taskId;
  }

  /** The arguments of an untasked type: none, `{}` or absent (spec V40: else -32602). */
  noArguments(args: Record<string, unknown> | undefined): void {
    if (!noArguments.safeParse(args ?? {}).success)
      throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: this event type takes no arguments');
  }

  /** The type a tool's tasks name as their event source: the first registered type listing the tool (spec TS6). */
  sourceFor(toolName: string): string | undefined {
    return this.sorted.find((name) => {
      const tools = this.types.get(name)?.options.tools;
      return typeof tools === 'function' ? tools(toolName) : tools?.includes(toolName);
    });
  }
}
