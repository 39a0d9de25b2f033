import {
  isTerminal,
  TASK_STATUS_EVENT,
  TaskExpiredError,
  TaskNotFoundError,
  type Clock,
  type LoggedEvent,
  type OwnerScope,
  type TaskEngine,
  type TaskRecord,
} from '../engine/index.js';
import { ErrorCodes, RpcError } from '../rpc/index.js';
import type { DeliveryMode, EventsErrorBody } from '../protocol/index.js';
import type { EventCatalog } from './EventCatalog.js';
import { decodeTaskEventCursor, encodeTaskEventCursor } from './taskEventCursor.js';

/** Entries read from a task's log per store read. */
const READ_PAGE = 100;
/**
 * How long after a task ended its subscriptions wait for its terminal status entry (appended right after the status
 * is stored) before they end anyway (spec TS9: drain briefly).
 */
export const DRAIN_MS = 2_000;

/** What a poll, stream or webhook subscribe asked for, after its checks. */
export interface SubscriptionRequest {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  cursor?: string | null | undefined;
  maxAgeMs?: number | undefined;
}

/**
 * One subscription to a task-backed event type: the type, the task (visible to the caller), and where in the task's
 * log it reads next. Poll, push and webhook share it, so they resolve cursors, ages and endings alike.
 */
export class TaskEventSubscription {
  private constructor(
    private readonly engine: TaskEngine,
    private readonly scope: OwnerScope,
    readonly name: string,
    readonly taskId: string,
    /** The `seq` read next. */
    public position: number,
    /** Events were skipped resolving the cursor (`maxAgeMs`): said once, on the first answer (spec V30, V33). */
    readonly truncated: boolean,
  ) {}

  /**
   * Checks a request as every mode must before anything is served (spec V40, V44): a registered type (-32011), a mode
   * it offers (-32014, V12), arguments per its inputSchema (-32602), a task the caller may see (a foreign one answers
   * exactly as a missing one, TS11), and a cursor of this subscription (-32602).
   */
  static async open(
    engine: TaskEngine,
    catalog: EventCatalog,
    scope: OwnerScope,
    request: SubscriptionRequest,
    mode: DeliveryMode,
  ): Promise<TaskEventSubscription> {
    if (!catalog.has(request.name))
      throw new RpcError(ErrorCodes.EVENTS_NOT_FOUND, `Unknown event type: ${request.name}`, { kind: 'event' });
    if (!catalog.offers(request.name, mode))
      throw new RpcError(ErrorCodes.EVENTS_UNSUPPORTED, `Event type ${request.name} does not offer ${mode} delivery`, {
        feature: 'deliveryMode',
        value: mode,
      });
    const taskId = catalog.taskOf(request.arguments);
    const length = await visible(taskId, () => engine.eventCount(scope, taskId));
    // spec V24 V25: a null or absent cursor starts from now; no history is replayed.
    if (request.cursor === null || request.cursor === undefined)
      return new TaskEventSubscription(engine, scope, request.name, taskId, length, false);
    const seq = decodeTaskEventCursor(request.cursor, taskId);
    if (seq > length)
      throw new RpcError(ErrorCodes.INVALID_PARAMS, 'Invalid params: the cursor is past the end of the event log');
    let from = seq;
    // spec V29 V30: replay starts at the later of the cursor and now − maxAgeMs; skipping events says truncated.
    if (request.maxAgeMs !== undefined) {
      const floor = engine.clock.now() - request.maxAgeMs;
      for (;;) {
        const page = await engine.readEvents(scope, taskId, from, READ_PAGE);
        const young = page.find((event) => event.at >= floor);
        if (young) {
          from = young.seq;
          break;
        }
        from += page.length;
        if (page.length < READ_PAGE) break;
      }
    }
    return new TaskEventSubscription(engine, scope, request.name, taskId, from, from > seq);
  }

  /** The cursor of the current position (safe to persist: everything before it was delivered, spec V28). */
  get cursor(): string {
    return encodeTaskEventCursor(this.taskId, this.position);
  }

  /**
   * Reads on from the position: up to `max` entries of this type (in `seq` order, spec V41), advancing past entries of
   * other types. `more` tells that entries remain unread.
   */
  async next(max: number): Promise<{ events: LoggedEvent[]; more: boolean }> {
    const events: LoggedEvent[] = [];
    for (;;) {
      const page = await visible(this.taskId, () =>
        this.engine.readEvents(this.scope, this.taskId, this.position, READ_PAGE),
      );
      for (const event of page) {
        if (events.length >= max) return { events, more: true };
        this.position = event.seq + 1;
        if (event.type === this.name) events.push(event);
      }
      if (page.length < READ_PAGE) return { events, more: false };
    }
  }

  /**
   * The task as it stands, and whether the subscription has ended: the task is terminal, everything is read, and its
   * terminal status entry is in (or the drain time passed). Undefined for a task that is gone (swept or deleted).
   */
  async state(clock: Clock): Promise<{ task: TaskRecord; ended: boolean } | undefined> {
    let task: TaskRecord;
    try {
      task = await this.engine.get(this.scope, this.taskId);
    } catch (error) {
      if (error instanceof TaskNotFoundError || error instanceof TaskExpiredError) return undefined;
      throw error;
    }
    if (!isTerminal(task.status)) return { task, ended: false };
    const length = await this.engine.eventCount(this.scope, this.taskId);
    if (this.position < length) return { task, ended: false };
    if (clock.now() - task.lastUpdatedAt >= DRAIN_MS) return { task, ended: true };
    const [last] = length > 0 ? await this.engine.readEvents(this.scope, this.taskId, length - 1, 1) : [];
    return { task, ended: last?.type === TASK_STATUS_EVENT && last.data['status'] === task.status };
  }
}

/** How a subscription to a task's events ends (EVENTS-SPEC §16.4): the task reached a terminal status, or is gone. */
export function taskEndedError(taskId: string, task: TaskRecord | undefined): EventsErrorBody {
  return task
    ? {
        code: ErrorCodes.EVENTS_NOT_FOUND,
        message: 'Task ended',
        data: { kind: 'event', reason: 'task_terminal', taskId, status: task.status },
      }
    : {
        code: ErrorCodes.EVENTS_NOT_FOUND,
        message: 'Task not found',
        data: { kind: 'event', reason: 'task_not_found', taskId },
      };
}

/** Runs a read of the caller's task; a task the caller may not see reads exactly as a missing one (TS11, TE15). */
async function visible<T>(taskId: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof TaskNotFoundError || error instanceof TaskExpiredError)
      throw new RpcError(ErrorCodes.INVALID_PARAMS, `Invalid params: Task not found`, { taskId });
    throw error;
  }
}
