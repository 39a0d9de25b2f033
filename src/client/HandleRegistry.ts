import { EventSourceSchema } from '../protocol/index.js';
import type { ClientSession } from './ClientSession.js';
import type { HandleInit } from './HandleInit.js';
import type { HandleStore, StoredHandle } from './HandleStore.js';
import { PollSchedule, type PollPolicy } from './PollSchedule.js';
import type { ProgressRouter } from './ProgressRouter.js';
import type { TaskClientError } from './TaskClientError.js';
import { TaskConnectionError, TaskNotFoundError } from './TaskClientError.js';
import { openTaskHandle, type HandleContext, type TaskHandle } from './TaskHandle.js';
import type { TaskOutcome } from './TaskOutcome.js';
import type { TaskSnapshot } from './TaskSnapshot.js';
import { describeTarget, targetKey } from './TaskTarget.js';
import { toTaskClientError } from './toTaskClientError.js';

export interface HandleRegistryOptions {
  store: HandleStore | undefined;
  /** Drop a stored handle once its outcome is known (default true). */
  forgetSettled?: boolean;
  poll?: Partial<PollPolicy>;
  maxPollFailures?: number;
  onError?: (error: Error) => void;
}

/**
 * The handles of one client: the live ones by task id (one handle per task, however often it is attached), and the
 * durable records of the in-flight ones in the handle store, kept until the task's outcome is known.
 */
export class HandleRegistry {
  private readonly live = new Map<string, TaskHandle>();
  private readonly context: HandleContext;

  constructor(
    private readonly session: ClientSession,
    private readonly progress: ProgressRouter,
    private readonly options: HandleRegistryOptions,
  ) {
    const policy = options.poll ?? {};
    this.context = {
      dialect: session.dialect,
      newSchedule: () => new PollSchedule(policy),
      maxPollFailures: options.maxPollFailures ?? 5,
      isConnected: () => session.isConnected,
      onSettled: (handle, settlement) => this.onSettled(handle, settlement),
      onAnswered: (handle, key) => this.onAnswered(handle, key),
    };
  }

  get store(): HandleStore | undefined {
    return this.options.store;
  }

  /** The live handle for a task id, if one is being followed or was handed out. */
  get(taskId: string): TaskHandle | undefined {
    return this.live.get(taskId);
  }

  /** A handle for a call this client just started; a task is stored so it survives a restart. */
  async started(init: HandleInit, progressToken: string): Promise<TaskHandle> {
    const handle = openTaskHandle(this.context, init);
    this.progress.bind(progressToken, handle);
    if (handle.taskId !== undefined) {
      this.live.set(handle.taskId, handle);
      await this.remember(handle);
    }
    return handle;
  }

  /** A handle for a task this client did not start in this process (attach, resume). */
  adopt(snapshot: TaskSnapshot, record: StoredHandle | undefined): TaskHandle {
    // A record is a file on disk: its event source is taken only if it still has the shape, and only for its task.
    const keptSource = EventSourceSchema.safeParse(record?.eventSource);
    const handle = openTaskHandle(this.context, {
      ...(record?.toolName !== undefined && { toolName: record.toolName }),
      snapshot,
      ...(record?.requestId !== undefined && { requestId: record.requestId }),
      ...(record?.answeredKeys !== undefined && { answeredKeys: record.answeredKeys }),
      ...(keptSource.success &&
        keptSource.data.input['taskId'] === snapshot.taskId && { eventSource: keptSource.data }),
    });
    this.live.set(snapshot.taskId as string, handle);
    return handle;
  }

  /** The stored records of this server: same target and dialect, and (for 2025-era HTTP) the same session. */
  async stored(): Promise<StoredHandle[]> {
    if (this.options.store === undefined) return [];
    const key = targetKey(this.session.target);
    const sessionId = this.session.sessionId;
    const dialect = this.session.dialect.name;
    return (await this.options.store.list()).filter(
      (record) =>
        record.target === key &&
        record.dialect === dialect &&
        (record.sessionId === undefined || record.sessionId === sessionId),
    );
  }

  async forget(taskId: string): Promise<void> {
    await this.options.store?.remove(taskId);
  }

  /** Poll this task now (a status notification named it). */
  wake(taskId: string): void {
    this.live.get(taskId)?.wake();
  }

  /** Poll every task now (the connection closed: each handle finds out at once). */
  wakeAll(): void {
    for (const handle of this.live.values()) handle.wake();
  }

  /** Stops following every handle; pending outcomes reject, stored records stay for `resume()`. */
  abandonAll(): void {
    const closing = new TaskConnectionError('The task client was closed');
    for (const handle of [...this.live.values()]) handle.abandon(closing);
  }

  private async remember(handle: TaskHandle): Promise<void> {
    const store = this.options.store;
    if (store === undefined || handle.taskId === undefined) return;
    const dialect = this.session.dialect;
    const sessionId = dialect.era === 'legacy' ? this.session.sessionId : undefined;
    const protocolVersion = this.session.protocolVersion;
    const capabilities = this.session.serverCapabilities;
    await store.put({
      taskId: handle.taskId,
      dialect: dialect.name,
      target: targetKey(this.session.target),
      endpoint: describeTarget(this.session.target),
      ...(handle.toolName !== undefined && { toolName: handle.toolName }),
      ...(handle.eventSource !== undefined && { eventSource: handle.eventSource }),
      storedAt: new Date().toISOString(),
      ...(sessionId !== undefined && { sessionId }),
      ...(protocolVersion !== undefined && { protocolVersion }),
      ...(sessionId !== undefined && capabilities !== undefined && { serverCapabilities: capabilities }),
      ...(handle.requestId !== undefined && { requestId: handle.requestId }),
    });
  }

  private async onSettled(
    handle: TaskHandle,
    settlement: { outcome: TaskOutcome } | { error: TaskClientError },
  ): Promise<void> {
    this.progress.releaseTarget(handle);
    const taskId = handle.taskId;
    if (taskId === undefined) return;
    if (this.live.get(taskId) === handle) this.live.delete(taskId);
    // A task that ended, or that the server no longer knows, is no longer in flight; a lost connection keeps it stored.
    const ended = 'outcome' in settlement && this.options.forgetSettled !== false;
    if (ended || ('error' in settlement && settlement.error instanceof TaskNotFoundError)) {
      await this.options.store
        ?.remove(taskId)
        .catch((error: unknown) => this.options.onError?.(toTaskClientError(error)));
    }
  }

  private onAnswered(handle: TaskHandle, key: string): void {
    const store = this.options.store;
    const taskId = handle.taskId;
    if (store === undefined || taskId === undefined) return;
    void store
      .get(taskId)
      .then((record) =>
        record === undefined
          ? undefined
          : store.update(taskId, { answeredKeys: [...(record.answeredKeys ?? []), key] }),
      )
      .catch((error: unknown) => this.options.onError?.(toTaskClientError(error)));
  }
}
