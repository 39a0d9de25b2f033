import { isTerminal, TaskTerminalError, type InputRequest, type TaskEngine, type TaskRecord } from '../engine/index.js';
import { ConsoleRefusal } from './ConsoleRefusal.js';
import { operatorAnswer } from './operatorAnswer.js';

/** Who acts from the console, as the timeline and the audit record name them (the admin token is one person's). */
export const CONSOLE_OPERATOR = 'console admin';

/** Tasks one bulk cancel may name. */
export const MAX_BULK_CANCEL = 100;

/** One action taken from the console, as `ConsoleOptions.audit` receives it. */
export interface ConsoleAuditRecord {
  at: number;
  action: 'cancel' | 'answer' | 'rerun';
  taskId: string;
  owner: string;
  /** What was done: the answered question's key and action, the re-run's new task id. */
  detail?: string;
  /** The client's address, when known. */
  address?: string;
}

/**
 * What an admin may do from the console, once the route checked the role and the page's own header: cancel, answer
 * a waiting task's question, re-run a finished retry-safe task. Each is written on the task's timeline and audited.
 */
export class ConsoleActions {
  constructor(
    private readonly engine: TaskEngine,
    /** False for a console over a store no runtime of this process runs (a re-run would never start). */
    private readonly runsTasks: boolean,
    private readonly audit: (record: ConsoleAuditRecord) => void,
  ) {}

  async cancel(taskId: string, address?: string): Promise<void> {
    const record = await this.found(taskId);
    if (isTerminal(record.status)) throw new ConsoleRefusal(409, `the task is already ${record.status}`);
    try {
      await this.engine.cancel(record.owner, taskId, 'Cancelled by an operator from the console.', 'console');
    } catch (error) {
      if (error instanceof TaskTerminalError) throw new ConsoleRefusal(409, error.message);
      throw error;
    }
    this.audited({ action: 'cancel', taskId, owner: record.owner }, address);
  }

  /** Cancels each of `taskIds` that is still running; says which were cancelled and why the others were not. */
  async cancelMany(taskIds: unknown, address?: string) {
    if (!Array.isArray(taskIds) || taskIds.length === 0 || !taskIds.every((id) => typeof id === 'string'))
      throw new ConsoleRefusal(400, 'taskIds must be a list of task ids');
    const unique = [...new Set(taskIds as string[])];
    if (unique.length > MAX_BULK_CANCEL) throw new ConsoleRefusal(400, `at most ${MAX_BULK_CANCEL} tasks at once`);
    const cancelled: string[] = [];
    const skipped: Array<{ taskId: string; reason: string }> = [];
    for (const taskId of unique) {
      try {
        await this.cancel(taskId, address);
        cancelled.push(taskId);
      } catch (error) {
        if (!(error instanceof ConsoleRefusal)) throw error;
        skipped.push({ taskId, reason: error.message });
      }
    }
    return { cancelled, skipped };
  }

  /** Answers the question `key` (an outstanding request or an open standing offer) with what the form holds. */
  async answer(taskId: string, body: Record<string, unknown>, address?: string): Promise<void> {
    const record = await this.found(taskId);
    const key = body['key'];
    if (typeof key !== 'string') throw new ConsoleRefusal(400, 'key must name the question');
    const question = questionOf(record, key);
    if (!question) throw new ConsoleRefusal(409, 'the question is no longer waiting for an answer');
    const answer = operatorAnswer(question, body);
    const { accepted } = await this.engine.answerInput(record.owner, taskId, { [key]: answer });
    // Answered, withdrawn or ended between the read and the write.
    if (!accepted.includes(key)) throw new ConsoleRefusal(409, 'the question is no longer waiting for an answer');
    const action = typeof answer.result['action'] === 'string' ? answer.result['action'] : undefined;
    const detail = `${key} (${action ?? 'text'})`;
    const done = { accept: 'accepted', decline: 'declined', cancel: 'cancelled' }[action ?? ''];
    const message = done ? `${done} question ${key}` : `answered question ${key} with a text`;
    await this.engine.recordTimeline(taskId, [
      { at: this.engine.clock.now(), kind: 'operator', by: CONSOLE_OPERATOR, message },
    ]);
    this.audited({ action: 'answer', taskId, owner: record.owner, detail }, address);
  }

  /**
   * Runs a finished retry-safe task again as a new task: the same request, owner, generation and retention, without
   * its requestor's progress token or connection (nobody waits on the new task but the console). Both timelines link
   * the two. Returns the new task's id.
   */
  async rerun(taskId: string, address?: string): Promise<string> {
    const record = await this.found(taskId);
    if (!isTerminal(record.status))
      throw new ConsoleRefusal(409, `the task is still ${record.status}: only a finished task is re-run`);
    if (!record.retrySafe)
      throw new ConsoleRefusal(409, 'the task is not retry-safe: its tool does not declare running it again safe');
    if (!this.runsTasks) throw new ConsoleRefusal(409, 'this console runs no tasks: re-run it from a server console');
    const { task } = await this.engine.create({
      owner: record.owner,
      reachableById: record.reachableById ?? false,
      request: { method: record.request.method, params: withoutProgressToken(record.request.params) },
      dialect: record.dialect,
      retention: record.retention,
      ...(record.pollIntervalMs !== undefined && { pollIntervalMs: record.pollIntervalMs }),
      toolErrorStatus: record.toolErrorStatus,
      retrySafe: true,
      meta: pick(record.meta, ['toolName', 'clientCapabilities', 'inputStyle']),
    });
    const at = this.engine.clock.now();
    const link = (id: string, other: string, direction: 'to' | 'from'): Promise<void> =>
      this.engine.recordTimeline(id, [{ at, kind: 'rerun', link: other, direction, by: CONSOLE_OPERATOR }]);
    await link(task.taskId, taskId, 'from');
    await link(taskId, task.taskId, 'to');
    this.audited({ action: 'rerun', taskId, owner: record.owner, detail: task.taskId }, address);
    return task.taskId;
  }

  private async found(taskId: string): Promise<TaskRecord> {
    const record = await this.engine.store.get(taskId);
    if (!record || this.engine.isExpired(record, this.engine.clock.now()))
      throw new ConsoleRefusal(404, 'no such task');
    return record;
  }

  private audited(record: Omit<ConsoleAuditRecord, 'at' | 'address'>, address: string | undefined): void {
    this.audit({ at: this.engine.clock.now(), ...record, ...(address !== undefined && { address }) });
  }
}

/** The outstanding request `key`, or the standing offer `key` while it has no answer. */
function questionOf(record: TaskRecord, key: string): InputRequest | undefined {
  if (isTerminal(record.status)) return undefined;
  if (Object.hasOwn(record.inputRequests, key)) return record.inputRequests[key];
  const offer = record.offers && Object.hasOwn(record.offers, key) ? record.offers[key] : undefined;
  return offer && !offer.answered ? offer : undefined;
}

function withoutProgressToken(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params['_meta'];
  if (typeof meta !== 'object' || meta === null || !('progressToken' in meta)) return params;
  const { progressToken: _token, ...rest } = meta as Record<string, unknown>;
  return { ...params, _meta: rest };
}

function pick(meta: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => key in meta).map((key) => [key, meta[key]]));
}
