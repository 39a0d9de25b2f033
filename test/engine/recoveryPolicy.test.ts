import { describe, expect, it } from 'vitest';

import {
  defaultRecoveryPolicy,
  INTERRUPTED_MESSAGE,
  withRunProgress,
  type TaskRecord,
} from '../../src/engine/index.js';
import { makeRecord } from '../helpers/records.js';

/** The record after the recovery of `lost` runs, each finding `steps[i]` completed journaled steps. */
function afterLostRuns(task: TaskRecord, steps: number[]): TaskRecord {
  return steps.reduce(
    (record, completed) => ({ ...withRunProgress(record, completed), recoveries: (record.recoveries ?? 0) + 1 }),
    task,
  );
}

describe('defaultRecoveryPolicy', () => {
  const policy = defaultRecoveryPolicy(3);

  it('fails work not marked safe to retry at the first lost run, progress or not', () => {
    const task = makeRecord({ retrySafe: false });
    expect(policy(withRunProgress(task, 0))).toEqual({ action: 'fail', statusMessage: INTERRUPTED_MESSAGE });
    expect(policy(withRunProgress(task, 5))).toEqual({ action: 'fail', statusMessage: INTERRUPTED_MESSAGE });
  });

  it('re-runs retry-safe work without a journal twice and fails it at the third lost run, as before', () => {
    const task = makeRecord({ retrySafe: true });
    // The decision at each recovery is taken on the record as withRunProgress annotates it.
    expect(policy(withRunProgress(task, 0))).toEqual({ action: 'rerun' });
    expect(policy(withRunProgress(afterLostRuns(task, [0]), 0))).toEqual({ action: 'rerun' });
    expect(policy(withRunProgress(afterLostRuns(task, [0, 0]), 0))).toEqual({
      action: 'fail',
      statusMessage: 'The runner of this task stopped renewing its lease 3 times; giving up after 3 runs.',
    });
    // A record nobody annotated counts its recoveries, the lost run included.
    expect(policy({ ...task, recoveries: 1 })).toEqual({ action: 'rerun' });
    expect(policy({ ...task, recoveries: 2 })['action']).toBe('fail');
  });

  it('keeps re-running a workflow whose every lost run completed a new step', () => {
    const task = makeRecord({ retrySafe: true });
    const progressing = [1, 2, 3, 4, 5, 6, 7];
    expect(policy(withRunProgress(afterLostRuns(task, progressing), 8))).toEqual({ action: 'rerun' });
    expect(withRunProgress(afterLostRuns(task, progressing), 8)).toMatchObject({ stepsAtRecovery: 8, stalledRuns: 0 });
  });

  it('counts only the lost runs in a row without progress: a step completed in between starts the count again', () => {
    const task = makeRecord({ retrySafe: true });
    // Lost runs finding 2, 2, 2, 3, 3 and now 3 completed steps: the run that reached step 3 started the count
    // again, so two in a row are without progress: still re-run.
    expect(policy(withRunProgress(afterLostRuns(task, [2, 2, 2, 3, 3]), 3))).toEqual({ action: 'rerun' });
    // A third one in a row without progress fails the task.
    expect(policy(withRunProgress(afterLostRuns(task, [2, 2, 2, 3, 3, 3]), 3))).toEqual({
      action: 'fail',
      statusMessage:
        'The runner of this task stopped renewing its lease 3 times in a row without completing a step; giving up after 3 runs.',
    });
  });

  it('honours maxRuns', () => {
    const task = makeRecord({ retrySafe: true });
    expect(defaultRecoveryPolicy(1)(withRunProgress(task, 0))['action']).toBe('fail');
    expect(defaultRecoveryPolicy(1)(withRunProgress(task, 1))).toEqual({ action: 'rerun' });
  });
});
