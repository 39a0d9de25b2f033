import type { TaskRecord } from '../record/TaskRecord.js';

export type RecoveryDecision = { action: 'fail'; statusMessage: string } | { action: 'rerun' };

/** Decides what happens to a task whose runner died while it was `working` or `input_required`. */
export type RecoveryPolicy = (task: TaskRecord) => RecoveryDecision;

/**
 * A lapsed lease says only that the runner stopped renewing it: its process may have ended, frozen or lost the store,
 * and its work may even have finished (a late outcome is refused). The message claims no more than that.
 */
export const INTERRUPTED_MESSAGE =
  'The runner of this task stopped renewing its lease before recording an outcome (its process ended, froze or lost the task store), so whether the work finished is unknown; it was not re-run because it is not marked safe to retry.';

/** The status message of a task queued again because the process holding it stopped before its work started. */
export const REQUEUED_MESSAGE =
  'Queued again: the process holding this task stopped before its work started (the work never began).';

/**
 * The task as the recovery of a lost run sees it, `completedSteps` being the journaled steps completed by now: a run
 * that completed a new step made progress and resets `stalledRuns`; any other lost run adds one. Work without a
 * journal never makes progress, so its `stalledRuns` is its lost runs in total.
 */
export function withRunProgress(task: TaskRecord, completedSteps: number): TaskRecord {
  const progressed = completedSteps > (task.stepsAtRecovery ?? 0);
  return { ...task, stepsAtRecovery: completedSteps, stalledRuns: progressed ? 0 : (task.stalledRuns ?? 0) + 1 };
}

/**
 * Default: re-run work declared safe to retry until `maxRuns` runs in a row were lost to crashes without progress,
 * fail everything else with a clear message. A lost run of a workflow that completed a new journaled step does not
 * count (an hours-long workflow may outlive many crashes); for other work every lost run counts, the first included.
 * Resuming after input is not a re-run and does not count.
 */
export function defaultRecoveryPolicy(maxRuns = 3): RecoveryPolicy {
  return (task) => {
    if (!task.retrySafe) return { action: 'fail', statusMessage: INTERRUPTED_MESSAGE };
    // A record the engine did not annotate (withRunProgress) counts every lost run.
    const lost = task.stalledRuns ?? (task.recoveries ?? 0) + 1;
    if (lost < maxRuns) return { action: 'rerun' };
    const how = (task.stepsAtRecovery ?? 0) > 0 ? ' in a row without completing a step' : '';
    return {
      action: 'fail',
      statusMessage: `The runner of this task stopped renewing its lease ${lost} times${how}; giving up after ${maxRuns} runs.`,
    };
  };
}
