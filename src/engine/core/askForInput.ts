import type { EngineLogger } from '../contracts/EngineHooks.js';
import { StoreUnavailableError } from '../record/TaskError.js';
import type { InputAnswer, InputRequest } from '../record/TaskRecord.js';
import { newInputKey } from '../record/transitions.js';
import { retryPause } from './retryPause.js';
import type { TaskInputs } from './TaskInputs.js';
import type { TaskWaiting } from './TaskWaiting.js';

/**
 * Asks one question for the run `attempt` and waits for its answer. Should the store come back without the question
 * (its latest writes lost: a Redis restarted before its append-only file caught up, a failover), the run asks again:
 * otherwise it would wait, renewing its lease, for an answer no requestor can be asked for. A store outage meanwhile
 * is waited out. Withdraws the question when `signal` aborts.
 */
export async function askForInput(
  parts: { inputs: TaskInputs; waiting: TaskWaiting; logger: EngineLogger },
  taskId: string,
  request: InputRequest,
  attempt: number,
  signal: AbortSignal,
): Promise<InputAnswer> {
  const { inputs, waiting, logger } = parts;
  // Chosen before the first write, so asking again (a lost reply, a lost question) asks the same question.
  const key = newInputKey(0);
  try {
    for (let failures = 0; ;) {
      try {
        await inputs.askOnce(taskId, key, request, attempt);
        const answer = await waiting.awaitInputAnswer(taskId, key, signal, attempt);
        if (answer !== undefined) return answer;
        logger.warn({ taskId, attempt }, 'input request lost by the task store: asked again');
      } catch (error) {
        // A store outage must not end a run that waits for its requestor: both steps are safe to repeat.
        if (!(error instanceof StoreUnavailableError) || error.reason === 'disk_full' || signal.aborted) throw error;
        logger.warn({ taskId, attempt, error: String(error) }, 'input wait lost the task store; retrying');
        await retryPause(failures++, signal);
      }
    }
  } finally {
    if (signal.aborted) await inputs.withdrawInput(taskId, key).catch(() => {});
  }
}
