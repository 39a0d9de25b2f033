import {
  TaskEngine,
  type EngineLogger,
  type TaskEngineOptions,
  type TaskStore,
  type TaskWork,
} from '../../engine/index.js';
import { QueueExecutor, QueueWorker, type QueueWorkerOptions } from '../../executors/queue/index.js';
import { journaledWork } from '../../workflow/index.js';
import { createStore } from '../createStore.js';
import { createTaskWork } from '../work/createTaskWork.js';
import { InternalLinkPool } from '../work/InternalLinkPool.js';
import type { ToolTaskPolicy } from '../../dialects/index.js';
import { WorkerEvents, type WorkerEventsOptions } from '../../events/index.js';
import type { ServerFactory } from '../ServerLike.js';
import { toolConcurrencyOf } from '../toolConcurrencyOf.js';

/**
 * A worker's lease on the tasks it runs (only those: queued tasks belong to no runner, so a renewal writes as many
 * rows as the worker runs tasks, at most its concurrency). With the dead-runner scan every third of it in every
 * worker, a worker killed mid-task has its tasks running again elsewhere within about 8 s.
 */
const WORKER_LEASE_MS = 6_000;

const SILENT: EngineLogger = { info() {}, warn() {}, error() {} };

export interface RunWorkerOptions {
  /** The same server factory the server instances use: tasks run their tools on instances of it. */
  server: ServerFactory;
  /** Run each task on a fresh instance of `server` instead of reusing instances (see createMcpTasks). Default false. */
  freshServerPerTask?: boolean;
  /** The work of every task, when the server instances replace it too (the `work` option of createMcpTasks). */
  work?: (engine: TaskEngine) => TaskWork;
  /** The store the server instances share: a TaskStore, or `postgres://…`, `redis://…`, a SQLite path. */
  store: TaskStore | string;
  /** Redis of the job queue, the one the server instances' `queueExecutor` uses. */
  redisUrl: string;
  /** Tasks this worker runs at once; a tool awaiting an input answer holds its slot. Default 16. */
  concurrency?: number;
  /**
   * How many tasks one owner may run at once across all workers of the queue, so other owners' tasks find a slot.
   * Default: three quarters of the live workers' slots together.
   */
  maxRunningPerOwner?: number;
  /**
   * The tool policies the servers use (`createMcpTasks({ tools })`): a tool's `concurrency` limits its tasks running
   * at once across every worker of the queue. Other fields are ignored here.
   */
  tools?: Record<string, ToolTaskPolicy['taskSupport'] | ToolTaskPolicy>;
  /** BullMQ queue name. Default `mcp-tasks`. */
  queueName?: string;
  /** BullMQ key prefix. Default `bull`. */
  prefix?: string;
  /** How long `close()` lets running tasks finish before handing them back. Default 30 s. */
  shutdownTimeoutMs?: number;
  /** Engine settings: `leaseMs` (how soon a dead worker is noticed; default 6 s here), `recoveryIntervalMs`, … */
  engine?: Omit<TaskEngineOptions, 'store' | 'executor' | 'logger'>;
  /** BullMQ job-lock tuning, how long a job that may not start yet waits, idle polling (see QueueWorkerOptions). */
  queue?: Pick<
    QueueWorkerOptions,
    'lockDurationMs' | 'stalledIntervalMs' | 'maxStalledCount' | 'deferMs' | 'drainDelayMs'
  >;
  logger?: EngineLogger;
  /**
   * Events (docs/events.md): the server instances' event types, so this worker's emits are checked alike and its
   * tasks' status changes logged, and `webhooks` to publish its appends to webhook subscriptions.
   */
  events?: WorkerEventsOptions;
}

export interface WorkerHandle {
  readonly engine: TaskEngine;
  readonly worker: QueueWorker;
  /** The runner name stored on the tasks this worker runs. */
  readonly runnerId: string;
  /**
   * Emits an event of an untasked type with `retain.durable` (docs/events.md): stored in the shared store, so every
   * server instance's poll, push streams and webhooks serve it. Needs the `events` option; resolves with its eventId.
   */
  emitEvent(
    name: string,
    data: Record<string, unknown>,
    options?: { to?: string | { clientId?: string; sub?: string } },
  ): Promise<string>;
  /** Finishes running tasks (up to `timeoutMs`, else hands them back), then disconnects. */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Starts a worker process's engine and queue worker: it takes queued tasks from BullMQ and runs them on fresh
 * instances of the author's server, with status, input requests and outcomes going through the shared store.
 * Its engine also takes part in recovery: a task whose worker died is queued again (retry-safe) or failed.
 */
export async function runWorker(options: RunWorkerOptions): Promise<WorkerHandle> {
  // Checked before anything is opened or connected.
  const toolConcurrency = options.tools && toolConcurrencyOf(options.tools);
  const events = options.events && new WorkerEvents(options.events);
  const store = typeof options.store === 'object' ? options.store : await createStore(options.store);
  const engine = new TaskEngine({
    leaseMs: WORKER_LEASE_MS,
    ...events?.engineOptions,
    ...options.engine,
    store,
    ...(options.logger && { logger: options.logger }),
  });
  const common = {
    connection: options.redisUrl,
    ...(options.queueName !== undefined && { queueName: options.queueName }),
    ...(options.prefix !== undefined && { prefix: options.prefix }),
    ...(options.logger && { logger: options.logger }),
  };
  // Recovery in this process queues re-runs on the same queue; nothing else is submitted from a worker.
  const producer = new QueueExecutor({ ...common, engine, store });
  engine.setExecutor(producer);
  // The worker owns the idle instances of the author's server its task runs reuse, and closes them with itself.
  const links = options.work || options.freshServerPerTask ? undefined : new InternalLinkPool(options.server);
  const worker = new QueueWorker({
    ...common,
    ...options.queue,
    engine,
    work: options.work
      ? options.work(engine)
      : journaledWork(
          engine,
          createTaskWork(
            options.server,
            {},
            {
              freshServerPerTask: options.freshServerPerTask ?? false,
              ...(links && { pool: links }),
            },
          ),
        ),
    ...(options.concurrency !== undefined && { concurrency: options.concurrency }),
    ...(options.maxRunningPerOwner !== undefined && { maxRunningPerOwner: options.maxRunningPerOwner }),
    ...(toolConcurrency && { toolConcurrency }),
    ...(options.shutdownTimeoutMs !== undefined && { shutdownTimeoutMs: options.shutdownTimeoutMs }),
  });
  let stopPublishing: (() => void) | undefined;
  try {
    await engine.start();
    stopPublishing = await events?.attach(engine, store, options.logger ?? SILENT);
    await worker.start();
  } catch (error) {
    stopPublishing?.();
    await worker.close({ timeoutMs: 0 }).catch(() => {});
    await producer.close().catch(() => {});
    await engine.close().catch(() => {});
    await links?.close().catch(() => {});
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    engine,
    worker,
    runnerId: worker.runnerId,
    emitEvent(name, data, emitOptions) {
      if (!events) return Promise.reject(new TypeError('emitEvent needs the events option'));
      return events.emit(name, data, emitOptions);
    },
    close(closeOptions = {}) {
      closing ??= (async () => {
        await worker.close(closeOptions);
        stopPublishing?.();
        await producer.close();
        await engine.close();
        await links?.close();
      })();
      return closing;
    },
  };
}
