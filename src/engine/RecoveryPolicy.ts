import type { TaskRecord } from './TaskRecord.js';

export type RecoveryDecision = { action: 'fail'; statusMessage: string } | { action: 'rerun' };

/** Decides what happens to a task whose runner died while it was `working` or `input_required`. */
export type RecoveryPolicy = (task: TaskRecord) => RecoveryDecision;

export const INTERRUPTED_MESSAGE =
  'The process running this task stopped before it finished; the work was interrupted and was not re-run because it is not marked safe to retry.';

/** Default: re-run work declared safe to retry (at most `maxAttempts` runs), fail everything else with a clear message. */
export function defaultRecoveryPolicy(maxAttempts = 3): RecoveryPolicy {
  return (task) => {
    if (task.retrySafe && task.attempts < maxAttempts) return { action: 'rerun' };
    if (task.retrySafe) {
      return {
        action: 'fail',
        statusMessage: `The process running this task stopped ${task.attempts} times; giving up after ${maxAttempts} attempts.`,
      };
    }
    return { action: 'fail', statusMessage: INTERRUPTED_MESSAGE };
  };
}
