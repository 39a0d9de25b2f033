import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { HttpFixture, eventually, type RawPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

async function create(peer: RawPeer, name: string, args: Record<string, unknown>): Promise<string> {
  const response = await peer.request('tools/call', { name, arguments: args, task: {} });
  expect(response.error, JSON.stringify(response.error)).toBeUndefined();
  return (response.result?.['task'] as { taskId: string }).taskId;
}

describe('server restart on SQLite (kill -9)', () => {
  it('keeps completed results retrievable, fails interrupted work and re-runs retry-safe work', async () => {
    const env = { MCP_TASKS_STORE: join(tempDir(), 'restart.db'), MCP_TASKS_LEASE_MS: '600' };
    const first = await HttpFixture.start({ env });
    const peer = await first.peer();
    await peer.initialize();
    const done = await create(peer, 'slow_compute', { seconds: 0, label: 'kept' });
    await eventually(
      async () => (await peer.request('tasks/get', { taskId: done })).result?.['status'] === 'completed',
    );
    const asking = await create(peer, 'confirm_delete', { filename: 'a.txt' });
    // A SEP-1686 task on work that is not retry-safe: its state is lost with the process.
    const sepId = 'sep-task-left-running';
    void peer.request('tools/call', {
      name: 'confirm_delete',
      arguments: { filename: 'b.txt' },
      _meta: { 'modelcontextprotocol.io/task': { taskId: sepId } },
    });
    const rerunnable = await create(peer, 'slow_compute', { seconds: 2, label: 'again' });
    await eventually(
      async () => (await peer.request('tasks/get', { taskId: asking })).result?.['status'] === 'input_required',
    );
    await peer.close();
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const second = await HttpFixture.start({ env });
    try {
      const later = await second.peer();
      await later.initialize();
      // The completed result survived and is still retrievable.
      expect((await later.request('tasks/get', { taskId: done })).result?.['status']).toBe('completed');
      expect((await later.request('tasks/result', { taskId: done })).result?.['content']).toEqual([
        { type: 'text', text: 'Computed kept in 0s' },
      ]);
      // Work that is not safe to retry is failed with a clear message once the dead runner's lease runs out.
      const failed = await eventually(async () => {
        const task = (await later.request('tasks/get', { taskId: asking })).result;
        return task?.['status'] === 'failed' ? task : undefined;
      });
      expect(failed['statusMessage']).toMatch(/stopped renewing its lease before recording an outcome/);
      // SEP-1686 shows such a task as `unknown` (spec 4.3, 6); client-chosen ids live in their session's scope, so
      // this one is found through the engine view only.
      // Retry-safe work runs again and completes.
      const result = await later.request('tasks/result', { taskId: rerunnable });
      expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Computed again in 2s' }]);
      await later.close();
    } finally {
      await second.close();
    }
  });
});
