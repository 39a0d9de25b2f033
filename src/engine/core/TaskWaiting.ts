import type { Clock } from '../contracts/Clock.js';
import type { EngineLogger } from '../contracts/EngineHooks.js';
import type { TaskAccess } from './TaskAccess.js';
import type { TaskChange } from '../record/TaskChange.js';
import { StoreUnavailableError, TaskNotFoundError, TaskTerminalError } from '../record/TaskError.js';
import type { InputAnswer, TaskRecord } from '../record/TaskRecord.js';
import { isTerminal } from '../record/TaskStatus.js';
import type { TaskWatch } from './TaskWatch.js';
import { isExpired, takeAnswer } from '../record/transitions.js';

/**
 * Waiting on tasks: subscribe to the store's event bus first, then read, so no change is missed. Events wake (an
 * ending from another process may bring its record, which spares the read); a re-read every `recheckIntervalMs`
 * covers a lost one.
 */
export class TaskWaiting {
  constructor(
    private readonly access: TaskAccess,
    private readonly clock: Clock,
    private readonly logger: EngineLogger,
    private readonly recheckIntervalMs: number,
  ) {}

  /**
   * Calls `listener` with the current record (or undefined once gone) after every change of the task, or only after
   * the changes `wants` accepts when the event says what changed (an event that does not is always followed up).
   */
  observe(
    taskId: string,
    listener: (record: TaskRecord | undefined) => void,
    wants?: (change: TaskChange) => boolean,
  ): () => void {
    const { store } = this.access;
    let closed = false;
    const unsubscribe = store.events.subscribe(taskId, (change) => {
      if (closed || (change && wants && !wants(change))) return;
      // The record a task's last write sent along (its end) is the one a read would find.
      if (change?.record) return listener(change.record);
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

  /**
   * Resolves with the task once its version is past `sinceVersion`, or undefined once it is gone. With a `watch`
   * begun before the caller read `sinceVersion`, the wait reads at its start only if that watch heard a later change.
   */
  waitForChange(
    taskId: string,
    sinceVersion: number,
    signal?: AbortSignal,
    watch?: TaskWatch,
  ): Promise<TaskRecord | undefined> {
    return this.waitFor(
      taskId,
      signal,
      {
        // An event for a version already seen (e.g. the caller's own write) cannot satisfy the wait.
        worthReading: (change) => change.version > sinceVersion,
        satisfied: (record) => record.version > sinceVersion,
      },
      watch === undefined || watch.heardPast(sinceVersion),
    );
  }

  /** Resolves with the task once it is terminal, or undefined once it is gone (expired or deleted). */
  async waitForTerminal(taskId: string, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    const record = await this.waitFor(taskId, signal, {
      worthReading: (change) => isTerminal(change.status),
      satisfied: (current) => isTerminal(current.status) || isExpired(current, this.clock.now()),
    });
    return record && !isExpired(record, this.clock.now()) ? record : undefined;
  }

  /**
   * One subscription for the whole wait: subscribed first, then read, so no change is missed; then a read on each
   * event whose change could satisfy the wait (events without a change always), and every `recheckIntervalMs` (a
   * lost event, an expiry). Reads never overlap: events arriving during one are folded into one more read. Without
   * `readFirst` the first read waits for an event or the re-check: the caller knows nothing changed since its read.
   */
  private waitFor(
    taskId: string,
    signal: AbortSignal | undefined,
    wanted: { worthReading(change: TaskChange): boolean; satisfied(record: TaskRecord): boolean },
    readFirst = true,
  ): Promise<TaskRecord | undefined> {
    const { store } = this.access;
    return new Promise((resolve, reject) => {
      let settled = false;
      let reading = false;
      let readAgain = false;
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
        if (reading) {
          readAgain = true;
          return;
        }
        reading = true;
        store.get(taskId).then(
          (record) => {
            reading = false;
            if (!record || wanted.satisfied(record)) return finish(undefined, record);
            if (readAgain) {
              readAgain = false;
              check();
            }
          },
          (error: unknown) =>
            finish(new StoreUnavailableError(`Task store read failed: ${String(error)}`, { cause: error })),
        );
      };
      const onAbort = () => finish(signal?.reason ?? new Error('aborted'));
      const unsubscribe = store.events.subscribe(taskId, (change) => {
        if (change && !wanted.worthReading(change)) return;
        // An ending sent with its record satisfies the wait without a read.
        if (change?.record && wanted.satisfied(change.record)) return finish(undefined, change.record);
        check();
      });
      const timer = setInterval(check, this.recheckIntervalMs);
      timer.unref();
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (readFirst) check();
    });
  }

  /**
   * Waits for the answer to `key`, removes it from the task and returns it. With the asking run's `attempt`, resolves
   * undefined when the task, still that run's and not finished, no longer holds the request: the store came back
   * without its latest writes (a Redis restarted before its append-only file caught up, a failover), so no answer can
   * come and the run asks again. Without `attempt` a missing request is a TaskNotFoundError.
   */
  async awaitInputAnswer(
    taskId: string,
    key: string,
    signal?: AbortSignal,
    attempt?: number,
  ): Promise<InputAnswer | undefined> {
    // A lost write can take the version back, so any other version is a change, and a missing request decides.
    const decided = (record: TaskRecord) =>
      isTerminal(record.status) || record.inputAnswers[key] !== undefined || !(key in record.inputRequests);
    let record = await this.access.read(taskId);
    for (;;) {
      if (!record) throw new TaskNotFoundError(taskId);
      const answer = record.inputAnswers[key];
      if (answer !== undefined) {
        // Taking it only frees its bytes: an outage then does not keep the run from the answer it has read.
        await this.access
          .update(taskId, (current) => takeAnswer(current, key))
          .catch((error: unknown) => {
            if (!(error instanceof StoreUnavailableError)) throw error;
          });
        return answer;
      }
      if (isTerminal(record.status)) throw new TaskTerminalError(taskId, record.status);
      if (!(key in record.inputRequests)) {
        if (attempt !== undefined && record.attempts === attempt) return undefined;
        throw new TaskNotFoundError(taskId);
      }
      const seen = record.version;
      record = await this.waitFor(taskId, signal, {
        worthReading: (change) => change.version !== seen,
        satisfied: (current) => current.version !== seen || decided(current),
      });
    }
  }
}
