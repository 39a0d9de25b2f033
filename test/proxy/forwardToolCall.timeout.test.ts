import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { afterEach, describe, expect, it } from 'vitest';

import { ConcurrencyGate, forwardToolCall, type Upstream } from '../../src/proxy/index.js';

/**
 * A per-tool `timeoutMs` is a deadline the gateway keeps whatever the garbage collector does. On Node 20,
 * `AbortSignal.any([signal, AbortSignal.timeout(ms)])` loses its deadline when a collection runs first: nothing holds
 * the timeout signal but the combined one, which refers to it weakly, so it is collected and its timer cleared
 * (nodejs/node#57736). A call then runs for as long as the upstream takes, however long that is.
 */

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** An upstream whose plain tool calls never answer; they end only when their signal aborts. */
function silentUpstream(): Upstream {
  return {
    tool: async () => undefined,
    requestorChosenTasks: false,
    serverDirectedTasks: async () => false,
    routes: { register: () => () => {} },
    request: (_method: string, _params: unknown, options: { signal: AbortSignal }) =>
      new Promise((_resolve, reject) => {
        options.signal.addEventListener('abort', () => reject(options.signal.reason as Error), { once: true });
      }),
  } as unknown as Upstream;
}

let collecting: NodeJS.Timeout | undefined;
afterEach(() => clearInterval(collecting));

describe('forwardToolCall: timeoutMs', () => {
  it('ends the call after timeoutMs even when garbage is collected meanwhile', async () => {
    const started = Date.now();
    const call = forwardToolCall(
      silentUpstream(),
      { name: 'slow' },
      {
        signal: new AbortController().signal,
        settings: { timeoutMs: 300 },
        gate: new ConcurrencyGate(),
        asTask: false,
      },
    );
    collecting = setInterval(collectGarbage, 20);
    // Without a deadline the call would never end; 10 s is far more than a 300 ms timeout needs, even on a loaded machine.
    const late = new Promise<never>((_resolve, reject) =>
      setTimeout(() => reject(new Error('the call was still running after 10 s: its timeout never fired')), 10_000),
    );
    await expect(Promise.race([call, late])).rejects.toThrow('The upstream call of slow did not finish within 300 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('ends the call with the caller when the caller aborts first', async () => {
    const caller = new AbortController();
    const call = forwardToolCall(
      silentUpstream(),
      { name: 'slow' },
      { signal: caller.signal, settings: { timeoutMs: 60_000 }, gate: new ConcurrencyGate(), asTask: false },
    );
    setTimeout(() => caller.abort(new Error('cancelled by the requestor')), 50);
    await expect(call).rejects.toThrow('cancelled by the requestor');
  });
});
