import { Counter, Gauge, Histogram, Registry } from 'prom-client';

import type { LoggedEvent, TaskLifecycleEvent } from '../engine/index.js';
import type { WebhookAttempt } from '../events/index.js';
import { generationOf } from '../protocol/index.js';

export interface TaskMetricsOptions {
  /** Registry to add the metrics to (e.g. an application's own). Default: a registry of their own. */
  registry?: Registry;
  /** Tasks running and waiting in this process, read when the metrics are scraped. */
  load?: () => { running: number; waiting: number };
}

/**
 * Prometheus metrics of the tasks this process handles (spec R72: watch resource use and alert on it): tasks created
 * and finished by dialect and status, their durations, recoveries after crashes, refused operations, and the
 * executor's load. Counters are per process; sum them across instances.
 */
export class TaskMetrics {
  readonly registry: Registry;
  private readonly created: Counter<'dialect'>;
  private readonly finished: Counter<'dialect' | 'status'>;
  private readonly duration: Histogram<'dialect' | 'status'>;
  private readonly recovered: Counter<'action'>;
  private readonly refused: Counter<'limit'>;
  private readonly stopped: Histogram;
  private readonly overdue: Counter;
  private readonly eventsAppended: Counter<'type'>;
  private readonly webhookAttempts: Counter<'kind' | 'outcome'>;
  private readonly webhookFailures: Counter<'reason'>;

  constructor(options: TaskMetricsOptions = {}) {
    this.registry = options.registry ?? new Registry();
    const registers = [this.registry];
    this.created = new Counter({
      name: 'mcp_tasks_created_total',
      help: 'Tasks created',
      labelNames: ['dialect'],
      registers,
    });
    this.finished = new Counter({
      name: 'mcp_tasks_finished_total',
      help: 'Tasks that reached a terminal status',
      labelNames: ['dialect', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'mcp_tasks_duration_seconds',
      help: 'Time from creation to the terminal status',
      labelNames: ['dialect', 'status'],
      buckets: [0.1, 1, 10, 60, 300, 1800, 3600, 4 * 3600, 24 * 3600],
      registers,
    });
    this.recovered = new Counter({
      name: 'mcp_tasks_recovered_total',
      help: 'Tasks whose process died while they ran, by what recovery did (rerun or fail)',
      labelNames: ['action'],
      registers,
    });
    this.refused = new Counter({
      name: 'mcp_tasks_refused_total',
      help: 'Task operations refused by the rate limit',
      labelNames: ['limit'],
      registers,
    });
    this.stopped = new Histogram({
      name: 'mcp_tasks_run_stop_seconds',
      help: 'Time from telling a run to stop (cancel, expiry, takeover) to its work returning',
      buckets: [0.01, 0.1, 1, 5, 10, 30, 60, 300],
      registers,
    });
    this.overdue = new Counter({
      name: 'mcp_tasks_abort_ignored_total',
      help: 'Runs still running past the grace period after they were told to stop (handlers that ignore aborts)',
      registers,
    });
    // Event types are fixed at start-up (the catalog), so the label stays bounded.
    this.eventsAppended = new Counter({
      name: 'mcp_tasks_events_appended_total',
      help: "Entries appended to tasks' event logs in this process (emits, status changes, progress), by type",
      labelNames: ['type'],
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'mcp_tasks_webhook_deliveries_total',
      help: 'Webhook delivery attempts by envelope kind and outcome (delivered, failed, abandoned, suspended)',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.webhookFailures = new Counter({
      name: 'mcp_tasks_webhook_failures_total',
      help: 'Webhook delivery attempts that did not deliver, by the lastError category',
      labelNames: ['reason'],
      registers,
    });
    const load = options.load;
    if (load) {
      new Gauge({
        name: 'mcp_tasks_running',
        help: 'Tasks running in this process',
        registers,
        collect() {
          this.set(load().running);
        },
      });
      new Gauge({
        name: 'mcp_tasks_waiting',
        help: 'Tasks waiting for a free slot in this process',
        registers,
        collect() {
          this.set(load().waiting);
        },
      });
    }
  }

  /** The engine's lifecycle hook. */
  observe(event: TaskLifecycleEvent): void {
    // Records written before the generations had one name each carry an earlier spelling.
    const dialect = generationOf(event.task.dialect) ?? event.task.dialect;
    if (event.type === 'created') this.created.inc({ dialect });
    if (event.type === 'recovered') this.recovered.inc({ action: event.action });
    if (event.type === 'run_stopped') this.stopped.observe(event.stopMs / 1000);
    if (event.type === 'run_overdue') this.overdue.inc();
    if (event.type === 'finished') {
      const status = event.task.status;
      this.finished.inc({ dialect, status });
      const end = event.task.terminalAt ?? event.task.lastUpdatedAt;
      this.duration.observe({ dialect, status }, Math.max(0, end - event.task.createdAt) / 1000);
    }
  }

  /** The engine's event-appended hook. */
  eventAppended(event: LoggedEvent): void {
    this.eventsAppended.inc({ type: event.type });
  }

  /**
   * A webhook delivery attempt: pass it as the `onAttempt` of the webhook deliveries (docs/events.md), in the process
   * whose sender delivers.
   */
  webhookAttempt(attempt: WebhookAttempt): void {
    this.webhookAttempts.inc({ kind: attempt.kind, outcome: attempt.outcome });
    if (attempt.outcome !== 'delivered') this.webhookFailures.inc({ reason: attempt.failure ?? 'unknown' });
  }

  refusedBy(limit: string): void {
    this.refused.inc({ limit });
  }

  /** The metrics in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
