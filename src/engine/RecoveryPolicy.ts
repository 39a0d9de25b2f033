import type { TaskRecord } from './TaskRecord.js';

export type RecoveryDecision = { action: 'fail'; statusMessage: string } | { action: 'rerun' };

/** Decides what happens to a task whose runner died while it was `working` or `input_required`. */
export type RecoveryPolicy = (task: TaskRecord) => RecoveryDecision;

export const INTERRUPTED_MESSAGE =
  'The process running this task stopped before it finished; the work was interrupted and was not re-run because it is not marked safe to retry.';

/**
 * Default: re-run work declared safe to retry (at most `maxRuns` runs lost to crashes, counting the first), fail
 * everything else with a clear message. Resuming after input is not a re-run and does not count.
 */
export function defaultRecoveryPolicy(maxRuns = 3): RecoveryPolicy {
  return (task) => {
    const lost = (task.recoveries ?? 0) + 1;
    if (task.retrySafe && lost < maxRuns) return { action: 'rerun' };
    if (task.retrySafe) {
      return {
        action: 'fail',
        statusMessage: `The process running this task stopped ${lost} times; giving up after ${maxRuns} runs.`,
      };
    }
    return { action: 'fail', statusMessage: INTERRUPTED_MESSAGE };
  };
}
