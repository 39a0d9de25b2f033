import { describe, expect, it } from 'vitest';

import { deepFreeze, type TaskRecord } from '../../src/engine/index.js';
import * as lifecycle from '../../src/engine/record/transitions.js';
import { makeRecord } from '../helpers/records.js';

const NOW = 1_750_000_000_000;
const frozen = (overrides: Partial<TaskRecord> = {}) => deepFreeze(makeRecord({ createdAt: NOW - 1000, ...overrides }));
const RESULT = { kind: 'result', result: { content: [] } } as const;

/** A run lost to a crash (its lease lapsed) and re-run: its statusMessage is the runtime's note. */
function rerun(): TaskRecord {
  const lapsed = frozen({ runner: 'r', leaseUntil: NOW - 1, attempts: 1, statusMessage: 'step 3/10', retrySafe: true });
  return deepFreeze(lifecycle.recover(lapsed, { action: 'rerun' }, NOW, undefined) as TaskRecord);
}

describe('the statusMessage a finished task keeps', () => {
  it('is the run’s last report, landing with the outcome; a failure keeps its diagnostic', () => {
    const reported = { message: 'step 20/20', progress: { progress: 20, total: 20 } };
    const done = lifecycle.complete(
      frozen({ statusMessage: 'step 1/20' }),
      RESULT,
      NOW,
      undefined,
      undefined,
      reported,
    );
    expect(done).toMatchObject({
      status: 'completed',
      statusMessage: 'step 20/20',
      progress: { progress: 20, total: 20, message: 'step 20/20' },
    });
    const error = { kind: 'error', error: { code: -32000, message: 'boom' } } as const;
    const failed = lifecycle.complete(
      frozen({ statusMessage: 'step 1/20' }),
      error,
      NOW,
      undefined,
      undefined,
      reported,
    );
    expect(failed).toMatchObject({ status: 'failed', statusMessage: 'The request failed: boom (code -32000)' });
    expect(failed?.progress).toMatchObject({ progress: 20, total: 20 });
  });

  it('is never the runtime’s re-run note: a re-run that reports nothing completes without a message', () => {
    const running = rerun();
    expect(running.statusMessage).toMatch(/^Re-running \(attempt 2\)/);
    const done = lifecycle.complete(running, RESULT, NOW);
    expect(done?.status).toBe('completed');
    expect(done?.statusMessage).toBeUndefined();
    expect(done?.statusNote).toBeUndefined();
  });

  it('is the work’s own once it replaced the note (by a status, a progress message, or with the outcome)', () => {
    const byStatus = deepFreeze(lifecycle.setStatusMessage(rerun(), 'resuming at step 3') as TaskRecord);
    expect(lifecycle.complete(byStatus, RESULT, NOW)?.statusMessage).toBe('resuming at step 3');
    const byProgress = deepFreeze(
      lifecycle.reportProgress(rerun(), { progress: 4, message: 'step 4/10' }) as TaskRecord,
    );
    expect(lifecycle.complete(byProgress, RESULT, NOW)?.statusMessage).toBe('step 4/10');
    // Progress without a message leaves the note a note.
    const bare = deepFreeze(lifecycle.reportProgress(rerun(), { progress: 4 }) as TaskRecord);
    expect(lifecycle.complete(bare, RESULT, NOW)?.statusMessage).toBeUndefined();
    expect(lifecycle.complete(rerun(), RESULT, NOW, undefined, undefined, { message: 'done' })?.statusMessage).toBe(
      'done',
    );
    // A cancel reason or a failure's diagnostic replaces the note as before.
    expect(lifecycle.cancel(rerun(), NOW, 'The task was cancelled by request.', 'o').statusMessage).toBe(
      'The task was cancelled by request.',
    );
  });
});
