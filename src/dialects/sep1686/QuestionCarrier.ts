import type { TaskEngine, TaskRecord } from '../../engine/index.js';
import { outstandingInputs } from '../shared/index.js';

/**
 * Record meta under which the instance holding a SEP-1686 task's original request says, while the task's questions are
 * outstanding, until when it carries them on that request's stream. `0` means the holder let the request go.
 */
export const SEP_CARRIER_META = 'sepQuestionsCarriedUntil';

/**
 * How long one mark holds. The holder renews it every third of this while questions are outstanding, so it lapses
 * only when the holder is gone (killed, restarted, cut off from the store); a poll then carries the questions instead.
 */
export const SEP_CARRIER_WINDOW_MS = 10_000;

/**
 * The holder's side (spec 4.4: the proposal sends questions on the original request's stream): while the request is
 * held and the task has questions outstanding, keeps a lapsing mark on the record that says so.
 */
export class QuestionCarrier {
  private until = 0;

  constructor(
    private readonly engine: TaskEngine,
    private readonly taskId: string,
  ) {}

  /**
   * Marks (or renews the mark on) `record` while it has questions outstanding. Returns how long the caller may wait
   * before calling again, or undefined when nothing is outstanding (no renewal is due).
   */
  async keep(record: TaskRecord): Promise<number | undefined> {
    if (outstandingInputs(record).length === 0) return undefined;
    const now = this.engine.clock.now();
    const renewAt = this.until - (SEP_CARRIER_WINDOW_MS * 2) / 3;
    if (now < renewAt) return renewAt - now;
    const until = now + SEP_CARRIER_WINDOW_MS;
    // A mark that could not be written is tried again at the next renewal; meanwhile a poll may carry the question
    // too, and the first answer wins.
    await this.engine.annotate(this.taskId, { [SEP_CARRIER_META]: until }).then(
      () => {
        this.until = until;
      },
      () => undefined,
    );
    return SEP_CARRIER_WINDOW_MS / 3;
  }

  /** The original request ended before its task: a poll may carry the questions at once. */
  async release(): Promise<void> {
    if (this.until === 0) return;
    this.until = 0;
    await this.engine.annotate(this.taskId, { [SEP_CARRIER_META]: 0 });
  }
}

/**
 * The poll's side: the outstanding questions of `record` that no live original request carries — its holder let it go,
 * or its mark lapsed and the question has waited a whole window (a live holder marks a new question within moments,
 * so one that old and unmarked has no holder).
 */
export function uncarriedQuestions(record: TaskRecord, now: number): Set<string> {
  const mark = record.meta[SEP_CARRIER_META];
  const keys = new Set<string>();
  if (typeof mark === 'number' && mark > now) return keys;
  for (const [key, pending] of outstandingInputs(record)) {
    if (mark === 0 || now - pending.createdAt >= SEP_CARRIER_WINDOW_MS) keys.add(key);
  }
  return keys;
}
