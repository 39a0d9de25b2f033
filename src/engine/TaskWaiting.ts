import type { Clock } from './Clock.js';
import type { EngineLogger } from './EngineHooks.js';
import type { TaskAccess } from './TaskAccess.js';
import { StoreUnavailableError, TaskNotFoundError, TaskTerminalError } from './TaskError.js';
import type { InputAnswer, TaskRecord } from './TaskRecord.js';
import { isTerminal } from './TaskStatus.js';
import { isExpired, takeAnswer } from './transitions.js';

/**
 * Waiting on tasks: subscribe to the store's event bus first, then read, so no change is missed. Events only wake;
 * a re-read every `recheckIntervalMs` covers a lost one.
 */
export class TaskWaiting {
  constructor(
    private readonly access: TaskAccess,
    private readonly clock: Clock,
    private readonly logger: EngineLogger,
    private readonly recheckIntervalMs: number,
  ) {}

  /** Calls `listener` with the current record (or undefined once gone) after every change of the task. */
  observe(taskId: string, listener: (record: TaskRecord | undefined) => void): () => void {
    const { store } = this.access;
    let closed = false;
    const unsubscribe = store.events.subscribe(taskId, () => {
      if (closed) return;
      store.get(taskId).then(
        (record) => {
          if (!closed) listener(record);
        },
        (error: unknown) => this.logger.warn({ taskId, error: String(error) }, 'observe read failed'),
      );
    });
    return () => {
      closed = true;
      unsubscribe();
    };
  }

  /** Resolves with the task once its version is past `sinceVersion`, or undefined once it is gone. */
  waitForChange(taskId: string, sinceVersion: number, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    const { store } = this.access;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (error: unknown, record?: TaskRecord) => {
        if (settled) return;
        settled = true;
        unsubscribe();
        clearInterval(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error) reject(error);
        else resolve(record);
      };
      const check = () => {
        if (settled) return;
        store.get(taskId).then(
          (record) => {
            if (!record || record.version > sinceVersion) finish(undefined, record);
          },
          (error: unknown) =>
            finish(new StoreUnavailableError(`Task store read failed: ${String(error)}`, { cause: error })),
        );
      };
      const onAbort = () => finish(signal?.reason ?? new Error('aborted'));
      const unsubscribe = store.events.subscribe(taskId, check);
      const timer = setInterval(check, this.recheckIntervalMs);
      timer.unref();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      // Subscribed first, then read: a change between the caller's read and the subscription is not missed.
      check();
    });
  }

  /** Resolves with the task once it is terminal, or undefined once it is gone (expired or deleted). */
  async waitForTerminal(taskId: string, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    let record = await this.access.read(taskId);
    while (record && !isTerminal(record.status) && !isExpired(record, this.clock.now())) {
      record = await this.waitForChange(taskId, record.version, signal);
    }
    return record && !isExpired(record, this.clock.now()) ? record : undefined;
  }

  /** Waits for the answer to `key`, removes it from the task and returns it. */
  async awaitInputAnswer(taskId: string, key: string, signal?: AbortSignal): Promise<InputAnswer> {
    let record = await this.access.store.get(taskId);
    for (;;) {
      if (!record) throw new TaskNotFoundError(taskId);
      const answer = record.inputAnswers[key];
      if (answer !== undefined) {
        await this.access.update(taskId, (current) => takeAnswer(current, key));
        return answer;
      }
      if (isTerminal(record.status)) throw new TaskTerminalError(taskId, record.status);
      if (!(key in record.inputRequests)) throw new TaskNotFoundError(taskId);
      record = await this.waitForChange(taskId, record.version, signal);
    }
  }
}
