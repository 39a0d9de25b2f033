import { describe, expect, it } from 'vitest';

import { LazyAbort } from '../../src/server/connection/LazyAbort.js';

describe('LazyAbort: an abort controller made when its signal is first asked for', () => {
  it('a signal asked for after the abort is already aborted, with the reason', () => {
    const abort = new LazyAbort();
    const reason = new Error('gone');
    abort.abort(reason);
    expect(abort.aborted).toBe(true);
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe(reason);
  });

  it('a signal asked for before the abort fires its listeners once, with the first reason', () => {
    const abort = new LazyAbort();
    const { signal } = abort;
    const seen: unknown[] = [];
    signal.addEventListener('abort', () => seen.push(signal.reason));
    expect(signal.aborted).toBe(false);
    abort.abort('first');
    abort.abort('second');
    expect(seen).toEqual(['first']);
    expect(abort.signal).toBe(signal);
    expect(signal.reason).toBe('first');
  });

  it('a later signal keeps the first reason too', () => {
    const abort = new LazyAbort();
    abort.abort('first');
    abort.abort('second');
    expect(abort.signal.reason).toBe('first');
  });
});
