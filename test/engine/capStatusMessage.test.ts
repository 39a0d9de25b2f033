import { describe, expect, it } from 'vitest';

import { capStatusMessage, deepFreeze, MAX_STATUS_MESSAGE_BYTES, type TaskRecord } from '../../src/engine/index.js';
import * as lifecycle from '../../src/engine/record/transitions.js';
import { makeRecord } from '../helpers/records.js';

const NOW = 1_750_000_000_000;
const frozen = (overrides: Partial<TaskRecord> = {}) => deepFreeze(makeRecord({ createdAt: NOW - 1000, ...overrides }));
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('the statusMessage cap', () => {
  it('leaves a message that fits alone, to the byte', () => {
    const exact = 'a'.repeat(MAX_STATUS_MESSAGE_BYTES);
    expect(capStatusMessage(exact)).toBe(exact);
    expect(capStatusMessage('short')).toBe('short');
  });

  it('cuts on a code point boundary and ends with an ellipsis, within the cap', () => {
    // 4-byte characters (surrogate pairs in UTF-16): no cut may split one.
    const emoji = '😀'.repeat(2000);
    const capped = capStatusMessage(emoji);
    expect(bytes(capped)).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES);
    expect(capped).toMatch(/^(😀)+…$/u);
    expect(capped.length).toBeGreaterThan(2000 / 2);
    const over = 'b'.repeat(MAX_STATUS_MESSAGE_BYTES + 1);
    expect(capStatusMessage(over)).toBe('b'.repeat(MAX_STATUS_MESSAGE_BYTES - 3) + '…');
  });

  it('applies wherever a statusMessage is set: handler status, progress, failure diagnostics, cancellation', () => {
    const huge = 'x'.repeat(30 * 1024 * 1024);
    const within = (record: TaskRecord | null) => {
      expect(bytes(record?.statusMessage ?? '')).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES);
      expect(record?.statusMessage?.endsWith('…')).toBe(true);
    };
    within(lifecycle.setStatusMessage(frozen(), huge));
    const progressed = lifecycle.reportProgress(frozen(), { progress: 1, message: huge });
    within(progressed);
    expect(progressed?.progress?.message).toBe(progressed?.statusMessage);
    within(lifecycle.complete(frozen(), { kind: 'error', error: { code: -32603, message: huge } }, NOW));
    within(lifecycle.cancel(frozen(), NOW, huge, 'owner'));
  });
});
