import type { Client, ServerCapabilities, Tool } from '@modelcontextprotocol/client';

import { EVENTS_EXTENSION, type EventSource } from '../protocol/index.js';
import { ClientSession } from './ClientSession.js';
import type { DialectName } from './DialectName.js';
import type { FollowOptions, TaskEvent } from './EventSourceFollower.js';
import { openEventsClient, type EventsClient } from './EventsClient.js';
import type { TaskDialect } from './dialects/TaskDialect.js';
import { HandleRegistry } from './HandleRegistry.js';
import { HandleStore } from './HandleStore.js';
import { ProgressRouter } from './ProgressRouter.js';
import { TaskConnectionError, TaskNotFoundError, TaskNotSupportedError } from './TaskClientError.js';
import type { CallToolOptions, TaskClientOptions, TaskList } from './TaskClientOptions.js';
import type { TaskHandle } from './TaskHandle.js';
import type { TaskOutcome } from './TaskOutcome.js';
import type { TaskSnapshot } from './TaskSnapshot.js';
import type { TaskTarget } from './TaskTarget.js';

export type { CallToolOptions, TaskClientOptions, TaskList } from './TaskClientOptions.js';

/**
 * A requestor for MCP tasks over the official SDK client: finds out which generation the server speaks, runs tools
 * as tasks where allowed, and returns handles that poll, take input, cancel and survive restarts. The connection is
 * `ClientSession`, progress routing `ProgressRouter`, the live and stored handles `HandleRegistry`; this is the API.
 */
export class TaskClient {
  private readonly progress = new ProgressRouter();
  private session!: ClientSession;
  private handles!: HandleRegistry;
  private closed = false;

  private constructor(private readonly options: TaskClientOptions) {}

  /** Connects to a server and picks the dialect. With a store, a stored 2025-era HTTP session is resumed. */
  static async connect(target: TaskTarget, options: TaskClientOptions = {}): Promise<TaskClient> {
    const client = new TaskClient(options);
    const store = typeof options.store === 'string' ? new HandleStore(options.store) : options.store;
    client.session = await ClientSession.open(target, options, store, {
      onNotification: (method, params) => client.onNotification(method, params),
      onClose: () => client.handles?.wakeAll(),
    });
    client.handles = new HandleRegistry(client.session, client.progress, {
      store,
      ...(options.forgetSettled !== undefined && { forgetSettled: options.forgetSettled }),
      ...(options.poll !== undefined && { poll: options.poll }),
      ...(options.maxPollFailures !== undefined && { maxPollFailures: options.maxPollFailures }),
      ...(options.onError !== undefined && { onError: options.onError }),
    });
    return client;
  }

  /** The generation in use; `none` when the server offers no tasks and calls run plainly. */
  get dialect(): DialectName {
    return this.session.dialect.name;
  }

  get protocolEra(): 'legacy' | 'modern' {
    return this.session.dialect.era;
  }

  get serverCapabilities(): ServerCapabilities | undefined {
    return this.session.serverCapabilities;
  }

  /** The Streamable HTTP session, when the server uses one. */
  get sessionId(): string | undefined {
    return this.session.sessionId;
  }

  /** The underlying SDK client, for everything that is not about tasks. */
  get sdk(): Client {
    return this.session.sdk;
  }

  async listTools(): Promise<Tool[]> {
    return this.protocolEra === 'legacy' ? this.session.tools.list() : (await this.session.sdk.listTools()).tools;
  }

  /**
   * Calls a tool, as a task where the server allows it (a `required` tool always is); resolves once the server
   * accepted the call. A plain call resolves at once with a handle whose outcome is the answer.
   */
  async callTool(name: string, args: Record<string, unknown> = {}, options: CallToolOptions = {}): Promise<TaskHandle> {
    const dialect = this.open();
    const asTask = await dialect.plan(name, options.mode ?? 'auto');
    const abort = new AbortController();
    const ttlMs = options.ttlMs ?? this.options.ttlMs;
    const progressToken = this.progress.open();
    let started;
    try {
      started = await dialect.start({
        name,
        arguments: args,
        asTask,
        ...(ttlMs !== undefined && { ttlMs }),
        ...(options.meta !== undefined && { meta: options.meta }),
        signal: abort.signal,
        progressToken,
      });
    } catch (error) {
      this.progress.release(progressToken);
      throw error;
    }
    const snapshot: TaskSnapshot =
      started.kind === 'task' ? started.snapshot : { status: 'working', dialect: dialect.name };
    const handle = await this.handles.started(
      {
        toolName: name,
        snapshot,
        started,
        abort,
        ...(started.kind === 'task' && started.requestId !== undefined && { requestId: started.requestId }),
      },
      progressToken,
    );
    if (options.follow !== false) void handle.outcome();
    return handle;
  }

  /**
   * A handle for an existing task id (after one `tasks/get`); throws `TaskNotFoundError` for an unknown id.
   * `follow: false` leaves polling to the first `outcome()`, `updates()` or `cancel()`.
   */
  async attach(taskId: string, options: { follow?: boolean } = {}): Promise<TaskHandle> {
    const dialect = this.open();
    const existing = this.handles.get(taskId);
    if (existing !== undefined) return existing;
    const record = await this.handles.store?.get(taskId);
    const poll = await dialect.get(taskId);
    const handle = this.handles.adopt(poll.snapshot, record);
    if (options.follow ?? true) void handle.outcome();
    return handle;
  }

  /**
   * Follows an event source kept from an earlier handle (`handle.eventSource`), from a persisted `event.cursor`: how a
   * host picks a task's intermediate results up again after a restart. Throws TaskNotSupportedError where the server
   * does not offer Events. Ends when the server ends the subscription (the task ended) or `options.signal` aborts.
   */
  followEvents(source: EventSource, options: FollowOptions = {}): AsyncGenerator<TaskEvent, void, undefined> {
    const dialect = this.open();
    if (!dialect.events || !this.session.offersEvents())
      throw new TaskNotSupportedError(EVENTS_EXTENSION, 'The server does not offer the Events extension');
    return dialect.events(source, options);
  }

  /**
   * The Events extension's requests for any event type: list, poll, stream, webhook subscribe and unsubscribe. Throws
   * TaskNotSupportedError where the server does not offer Events.
   */
  events(): EventsClient {
    const dialect = this.open();
    if (!dialect.eventsContext || !this.session.offersEvents())
      throw new TaskNotSupportedError(EVENTS_EXTENSION, 'The server does not offer the Events extension');
    return openEventsClient(dialect.eventsContext());
  }

  /** The task's current state, from one `tasks/get`. */
  async getTask(taskId: string): Promise<TaskSnapshot> {
    return (await this.open().get(taskId)).snapshot;
  }

  /** The server's task list, or (where the dialect has none) the stored handles for this server with their status. */
  async listTasks(cursor?: string): Promise<TaskList> {
    const dialect = this.open();
    if (dialect.list !== undefined) {
      try {
        return { ...(await dialect.list(cursor)), source: 'server' };
      } catch (error) {
        if (!(error instanceof TaskNotSupportedError) || this.handles.store === undefined) throw error;
      }
    }
    if (this.handles.store === undefined) {
      throw new TaskNotSupportedError(
        'tasks/list',
        `The ${dialect.name} dialect has no task listing and no handle store is set`,
      );
    }
    const tasks: TaskSnapshot[] = [];
    for (const record of await this.handles.stored()) {
      try {
        tasks.push((await dialect.get(record.taskId)).snapshot);
      } catch (error) {
        if (!(error instanceof TaskNotFoundError)) throw error;
      }
    }
    return { tasks, source: 'store' };
  }

  /** Cancels a task by id and settles on the server's final word (see `TaskHandle.cancel`). */
  async cancelTask(taskId: string): Promise<TaskOutcome> {
    return (await this.attach(taskId, { follow: false })).cancel();
  }

  /** SEP-1686 `tasks/delete`; other dialects have no client-side deletion. */
  async deleteTask(taskId: string): Promise<void> {
    const dialect = this.open();
    if (dialect.delete === undefined) {
      throw new TaskNotSupportedError('tasks/delete', `The ${dialect.name} dialect has no tasks/delete`);
    }
    await dialect.delete(taskId);
    await this.handles.forget(taskId);
  }

  /**
   * Handles for the stored in-flight tasks of this server (same dialect and, for 2025-era HTTP, same session),
   * each followed again from where the server is now. Tasks the server no longer knows are dropped from the store.
   */
  async resume(): Promise<TaskHandle[]> {
    const dialect = this.open();
    const handles: TaskHandle[] = [];
    for (const record of await this.handles.stored()) {
      const existing = this.handles.get(record.taskId);
      if (existing !== undefined) {
        handles.push(existing);
        continue;
      }
      try {
        const poll = await dialect.get(record.taskId);
        const handle = this.handles.adopt(poll.snapshot, record);
        void handle.outcome();
        handles.push(handle);
      } catch (error) {
        if (!(error instanceof TaskNotFoundError)) throw error;
        await this.handles.forget(record.taskId);
      }
    }
    return handles;
  }

  /**
   * Closes the connection without cancelling anything: handles still being followed reject their outcome with
   * `TaskConnectionError`, and stored handles stay stored for `resume()`.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.handles.abandonAll();
    await this.session.close();
  }

  private onNotification(method: string, params: Record<string, unknown> | undefined): boolean {
    // Progress for a call of ours is ours: the SDK no longer knows the token once the task was created.
    if (method === 'notifications/progress' && this.progress.route(params)) return true;
    const taskId = this.session.dialect.notificationTaskId(method, params);
    if (taskId !== undefined) this.handles?.wake(taskId);
    return false;
  }

  /** The dialect to use, once the client is known to be open. */
  private open(): TaskDialect {
    if (this.closed || !this.session.isOpen) throw new TaskConnectionError('The task client is closed');
    return this.session.dialect;
  }
}
