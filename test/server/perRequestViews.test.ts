import type { IncomingMessage } from 'node:http';

import { describe, expect, it } from 'vitest';

import { ConnectionSessionView, type SettledSession } from '../../src/server/connection/ConnectionSessionView.js';
import { LazyAbort } from '../../src/server/connection/LazyAbort.js';
import { RequestContext, type RequestContextParts } from '../../src/server/connection/RequestContext.js';
import { webRequestOf } from '../../src/server/http/fast/nodeRequest.js';

/** The accessors an object defines itself (not through its prototype). */
function ownAccessors(object: object): string[] {
  return Object.entries(Object.getOwnPropertyDescriptors(object))
    .filter(([, descriptor]) => descriptor.get !== undefined || descriptor.set !== undefined)
    .map(([name]) => name);
}

const caller = { owner: 'o', scope: 'o', listable: true, authenticated: false };

function parts(): RequestContextParts {
  return {
    engine: {} as RequestContextParts['engine'],
    caller,
    policyFor: (name) => (name === 'slow' ? { taskSupport: 'required' } : undefined),
    defaultPollIntervalMs: 1000,
    outbound: {
      relatedRequest: async () => {},
      relatedNotification: async () => {},
      notification: async () => {},
    },
    connectionId: 'c1',
    clientCapabilities: { elicitation: {} },
    inFlightInputs: new Set(),
    onTaskCreated: () => {},
    advertisePollInterval: () => {},
  };
}

// Objects made for every request keep their lazy fields on a class's prototype: an accessor an object literal
// defines on each instance kept the whole exchange alive through every scavenge (docs/architecture.md, "fast path").
describe('the objects made for each request', () => {
  it("RequestContext: the request's signal, made when first read, follows the request's abort", () => {
    const abort = new LazyAbort();
    const ctx = new RequestContext(abort, parts());
    expect(ownAccessors(ctx)).toEqual([]);
    expect(ctx.connectionId).toBe('c1');
    expect(ctx.policyFor('slow')).toEqual({ taskSupport: 'required' });
    const { signal } = ctx;
    expect(signal.aborted).toBe(false);
    abort.abort('cancelled');
    expect(ctx.signal).toBe(signal);
    expect(signal.reason).toBe('cancelled');

    const late = new LazyAbort();
    late.abort('gone');
    expect(new RequestContext(late, parts()).signal.reason).toBe('gone');
  });

  it('ConnectionSessionView: reads what the session settles after the view was made, and lends policyFor', () => {
    const settled: SettledSession = {};
    let longLived = false;
    const view = new ConnectionSessionView(false, caller, settled, () => longLived, parts().policyFor);
    expect(ownAccessors(view)).toEqual([]);
    expect(view.negotiatedVersion).toBeUndefined();
    settled.negotiatedVersion = '2025-11-25';
    settled.clientCapabilities = { sampling: {} };
    longLived = true;
    expect(view.negotiatedVersion).toBe('2025-11-25');
    expect(view.clientCapabilities).toEqual({ sampling: {} });
    expect(view.longLived).toBe(true);
    // The dialects pass it on by itself.
    const { policyFor } = view;
    expect(policyFor('slow')?.taskSupport).toBe('required');
  });

  it("webRequestOf: the Request's signal is the exchange's, read when asked for, and a clone follows it", () => {
    const req = {
      method: 'POST',
      url: '/mcp?x=1',
      headers: { host: '127.0.0.1:3000', 'content-type': 'application/json' },
    } as unknown as IncomingMessage;
    const abort = new LazyAbort();
    let reads = 0;
    const request = webRequestOf(req, '{"a":1}', () => {
      reads++;
      return abort.signal;
    });
    expect(request).toBeInstanceOf(Request);
    expect(ownAccessors(request)).toEqual([]);
    expect(request.url).toBe('http://127.0.0.1:3000/mcp?x=1');
    expect(request.headers.get('content-type')).toBe('application/json');
    expect(reads).toBe(0);
    expect(request.signal).toBe(abort.signal);
    const clone = request.clone();
    abort.abort(new Error('client gone'));
    expect(request.signal.aborted).toBe(true);
    expect(clone.signal.aborted).toBe(true);
    expect(webRequestOf(req, undefined).signal.aborted).toBe(false);
  });
});
