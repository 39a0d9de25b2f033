import { describe, expect, it } from 'vitest';

import { detailOf, summaryOf } from '../../src/console/taskViews.js';
import { reportProgress } from '../../src/engine/record/transitions.js';
import { makeRecord } from '../helpers/records.js';

describe('the console’s task views', () => {
  it('carry the latest progress (value and total) beside the message, for the progress bar', () => {
    const record = reportProgress(makeRecord(), { progress: 3, total: 8, message: 'hashed 3/8 files' });
    expect(summaryOf(record!)).toMatchObject({
      statusMessage: 'hashed 3/8 files',
      progress: { progress: 3, total: 8 },
    });
    expect(detailOf(record!).progress).toEqual({ progress: 3, total: 8 });
    // A work that does not know its total shows the bare count.
    expect(summaryOf(reportProgress(makeRecord(), { progress: 5 })!).progress).toEqual({ progress: 5 });
    expect(summaryOf(makeRecord()).progress).toBeUndefined();
  });
});
