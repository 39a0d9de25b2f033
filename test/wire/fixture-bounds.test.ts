import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { StdioPeer } from '../helpers/rawWire.js';

describe('the fixture validates slow_compute seconds', () => {
  let peer: StdioPeer;
  beforeAll(async () => {
    peer = await StdioPeer.start();
    await peer.initialize();
  });
  afterAll(async () => peer.close());

  it.each([1e308, 3601, -1, 'soon'])('refuses seconds=%s with -32602 instead of running for ever', async (seconds) => {
    const direct = await peer.request('tools/call', { name: 'slow_compute', arguments: { seconds } });
    expect(direct.error?.code).toBe(-32602);
    expect(direct.error?.message).toContain('seconds must be a number from 0 to 3600');
    const created = await peer.request('tools/call', { name: 'slow_compute', arguments: { seconds }, task: {} });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    const result = await peer.request('tasks/result', { taskId });
    expect(result.error?.code).toBe(-32602);
    expect((await peer.request('tasks/get', { taskId })).result?.['status']).toBe('failed');
  });

  it('still runs a valid duration', async () => {
    const response = await peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0.1, label: 'ok' },
    });
    expect((response.result?.['content'] as Array<{ text: string }>)[0]?.text).toBe('Computed ok in 0.1s');
  });
});
