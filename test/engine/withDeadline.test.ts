import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { afterEach, describe, expect, it } from 'vitest';

import { withDeadline } from '../../src/engine/index.js';

// Collections on demand: a deadline must fire whatever the collector takes (nodejs/node#57736 took
// AbortSignal.timeout inside AbortSignal.any on Node 20).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

let collecting: NodeJS.Timeout | undefined;
afterEach(() => clearInterval(collecting));

const aborted = (signal: AbortSignal, withinMs: number) =>
  new Promise<unknown>((resolve, reject) => {
    if (signal.aborted) return resolve(signal.reason);
    const late = setTimeout(() => reject(new Error(`not aborted within ${withinMs} ms`)), withinMs);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(late);
        resolve(signal.reason);
      },
      { once: true },
    );
  });

describe('withDeadline', () => {
  it('aborts with a TimeoutError at its deadline while garbage is collected meanwhile', async () => {
    const started = Date.now();
    const { signal } = withDeadline(new AbortController().signal, 200);
    collecting = setInterval(collectGarbage, 20);
    const reason = await aborted(signal, 10_000);
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('follows the signal it extends, and never fires once cleared', async () => {
    const caller = new AbortController();
    const first = withDeadline(caller.signal, 60_000);
    caller.abort(new Error('the requestor went away'));
    expect(((await aborted(first.signal, 1000)) as Error).message).toBe('the requestor went away');
    first.clear();
    const second = withDeadline(new AbortController().signal, 50);
    second.clear();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(second.signal.aborted).toBe(false);
  });
});
