import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { HttpFixture, ModernPeer, eventually } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

describe('a multi-round-trip task waiting for a person holds nothing in memory', () => {
  it('survives a kill -9 of the server while it waits, and resumes with the answer on the next server', async () => {
    // Every process of a deployment shares the key that seals request state.
    const env = {
      MCP_TASKS_STORE: join(tempDir(), 'mrtr.db'),
      MCP_TASKS_REQUEST_STATE_KEY: randomBytes(32).toString('hex'),
      MCP_TASKS_LEASE_MS: '500',
    };
    const first = await HttpFixture.start({ env });
    const peer = new ModernPeer(first.url);
    const created = await peer.request('tools/call', { name: 'staged_deploy', arguments: { service: 'billing' } });
    expect(created.result?.['resultType']).toBe('task');
    const taskId = created.result?.['taskId'] as string;
    const waiting = await eventually(async () => {
      const task = (await peer.request('tasks/get', { taskId })).result;
      return task?.['status'] === 'input_required' ? task : undefined;
    });
    const [key] = Object.keys(waiting['inputRequests'] as object) as [string];
    const question = (waiting['inputRequests'] as Record<string, { params: { message: string } }>)[key]?.params.message;
    const buildPid = /build-billing-(\d+)/.exec(question ?? '')?.[1];
    expect(buildPid).toBe(String(first.child.pid));
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const second = await HttpFixture.start({ env });
    try {
      const again = new ModernPeer(second.url);
      // Well past a lease: nothing ran, so nothing was recovered or failed.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const still = (await again.request('tasks/get', { taskId })).result;
      expect(still?.['status']).toBe('input_required');
      expect(
        (
          await again.request('tasks/update', {
            taskId,
            inputResponses: { [key]: { action: 'accept', content: { approve: true } } },
          })
        ).result,
      ).toEqual({ resultType: 'complete' });
      // Any end, so a task that failed shows its status and statusMessage instead of a timeout.
      const done = await eventually(async () => {
        const task = (await again.request('tasks/get', { taskId })).result;
        return ['completed', 'failed', 'cancelled'].includes(String(task?.['status'])) ? task : undefined;
      });
      expect({ status: done['status'], statusMessage: done['statusMessage'] }).toEqual({ status: 'completed' });
      // The second round ran on the new server and reused the build of the first one.
      expect(done['result']).toEqual({
        content: [
          { type: 'text', text: `Deployed build-billing-${first.child.pid} (deployer pid ${second.child.pid})` },
        ],
        resultType: 'complete',
      });
    } finally {
      await second.close();
    }
  });
});
