import { isTerminal, type StandingOffer, type TaskRecord } from '../engine/index.js';

/** A task as the list shows it. */
export interface TaskSummary {
  taskId: string;
  owner: string;
  status: string;
  statusMessage?: string;
  /** The work's latest progress (`total` when it knows one), for a progress bar. */
  progress?: { progress: number; total?: number };
  tool?: string;
  generation: string;
  createdAt: number;
  lastUpdatedAt: number;
  terminalAt?: number;
  /** Creation to the terminal status; undefined while it runs (the page counts up from `createdAt`). */
  durationMs?: number;
  attempts: number;
}

export function toolOf(record: TaskRecord): string | undefined {
  const name = record.request.params['name'];
  return typeof name === 'string' ? name : undefined;
}

export function summaryOf(record: TaskRecord): TaskSummary {
  const summary: TaskSummary = {
    taskId: record.taskId,
    owner: record.owner,
    status: record.status,
    generation: record.dialect,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    attempts: record.attempts,
  };
  const tool = toolOf(record);
  if (tool !== undefined) summary.tool = tool;
  if (record.statusMessage !== undefined) summary.statusMessage = record.statusMessage;
  if (record.progress !== undefined) {
    const { progress, total } = record.progress;
    summary.progress = total === undefined ? { progress } : { progress, total };
  }
  if (record.terminalAt !== undefined) {
    summary.terminalAt = record.terminalAt;
    summary.durationMs = record.terminalAt - record.createdAt;
  }
  return summary;
}

/** Everything the task page shows; the record's dialect-private `meta` stays out (session ids, request state). */
export function detailOf(record: TaskRecord) {
  return {
    ...summaryOf(record),
    terminal: isTerminal(record.status),
    // SEP-1686 requestors name their tasks; the store keeps that name as the idempotency key.
    requestorTaskId: record.idempotencyKey ?? null,
    method: record.request.method,
    arguments: record.request.params['arguments'] ?? null,
    retention: record.retention,
    expiresAt: record.expiresAt,
    pollIntervalMs: record.pollIntervalMs ?? null,
    runner: record.runner ?? null,
    leaseUntil: record.leaseUntil ?? null,
    startedAt: record.startedAt ?? null,
    recoveries: record.recoveries ?? 0,
    recovery: record.recovery ?? null,
    retrySafe: record.retrySafe,
    suspended: record.suspended ?? false,
    wakeAt: record.wakeAt ?? null,
    cancelledBy: record.cancelledBy ?? null,
    inputRequests: Object.entries(record.inputRequests).map(([key, request]) => ({ key, ...request })),
    inputAnswers: Object.entries(record.inputAnswers).map(([key, answer]) => ({ key, answer })),
    offers: Object.entries(record.offers ?? {}).map(([key, offer]) => offerView(key, offer)),
    outcome: record.outcome ?? null,
    version: record.version,
  };
}

/** A standing offer as the task page shows it: its message, and whether the work has an answer and has taken it. */
function offerView(key: string, offer: StandingOffer) {
  const message = offer.params?.['message'];
  return {
    key,
    method: offer.method,
    message: typeof message === 'string' ? message : null,
    // What an admin's answer form is made from.
    requestedSchema: offer.params?.['requestedSchema'] ?? null,
    createdAt: offer.createdAt,
    answered: offer.answered === true,
    // The record keeps an answer only until a journaled check consumed it (engine/offers.ts).
    consumed: offer.answered === true && offer.answer === undefined,
  };
}
