import { describe, expect, it } from 'vitest';

import { multiRoundTripMeta, readTaskMeta, taskMetaFor } from '../../src/dialects/index.js';

describe('the server task meta', () => {
  it('reads back what a dialect writes, under the stored keys', () => {
    const meta = taskMetaFor(
      { connectionId: 'c1' },
      {
        toolName: 'report',
        clientCapabilities: { elicitation: {} },
        policy: { taskSupport: 'optional', inputStyle: 'multiRoundTrip' },
        multiRoundTrip: { requestState: 's', responses: { a: { ok: true } } },
      },
    );
    // Stored keys are part of every store's records: they must not change.
    expect(meta).toEqual({
      connectionId: 'c1',
      toolName: 'report',
      clientCapabilities: { elicitation: {} },
      inputStyle: 'multiRoundTrip',
      mrtr: { requestState: 's', responses: { a: { ok: true } } },
    });
    expect(readTaskMeta({ meta })).toEqual({
      connectionId: 'c1',
      toolName: 'report',
      clientCapabilities: { elicitation: {} },
      inputStyle: 'multiRoundTrip',
      multiRoundTrip: { requestState: 's', responses: { a: { ok: true } } },
    });
  });

  it('defaults a task created without it, and ignores values of the wrong type', () => {
    expect(readTaskMeta({ meta: {} })).toEqual({ clientCapabilities: {}, inputStyle: 'requests' });
    expect(
      readTaskMeta({
        meta: { connectionId: 7, toolName: null, clientCapabilities: 'x', inputStyle: 'other', mrtr: 1 },
      }),
    ).toEqual({ clientCapabilities: {}, inputStyle: 'requests' });
  });

  it('writes no tool and no multi-round-trip state when there is none', () => {
    expect(
      taskMetaFor({ connectionId: 'c2' }, { toolName: undefined, clientCapabilities: undefined, policy: undefined }),
    ).toEqual({
      connectionId: 'c2',
      clientCapabilities: {},
      inputStyle: 'requests',
    });
  });

  it('replaces the multi-round-trip state as a run suspends', () => {
    const meta = {
      ...taskMetaFor(
        { connectionId: 'c' },
        { toolName: 't', clientCapabilities: {}, policy: undefined, multiRoundTrip: { responses: { q: 1 } } },
      ),
      ...multiRoundTripMeta({ keys: { '0': 'q' } }),
    };
    expect(readTaskMeta({ meta }).multiRoundTrip).toEqual({ keys: { '0': 'q' } });
  });
});
