import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { startDemo as startDemoServer } from '../helpers/demoServer.js';
import { HttpPeer, eventually } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

const startDemo = (store: string) => startDemoServer({ MCP_TASKS_STORE: store });

describe('the demo migration workflow (npm start)', () => {
  it('survives kill -9 of the server and finishes on restart, each repository migrated once', async () => {
    const store = join(tempDir(), 'demo.db');
    const first = await startDemo(store);
    const peer = new HttpPeer(first.url);
    await peer.initialize();
    const repositories = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
    const created = await peer.request('tools/call', {
      name: 'migrate_repositories',
      arguments: { repositories, secondsPerRepository: 0.4 },
      task: {},
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    await eventually(async () =>
      /^2 of 6/.test(String((await peer.request('tasks/get', { taskId })).result?.['statusMessage'] ?? '')),
    );
    await peer.close();
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;

    const second = await startDemo(store);
    try {
      const again = new HttpPeer(second.url);
      await again.initialize();
      const result = await again.request('tasks/result', { taskId });
      const text = (result.result?.['content'] as Array<{ text: string }>)[0]?.text ?? '';
      const lines = text.split('\n');
      expect(lines.map((line) => line.split(':')[0])).toEqual(repositories);
      const pids = lines.map((line) => Number(/process (\d+)/.exec(line)?.[1]));
      // The first repositories were migrated before the crash and not again; the rest by the new server.
      expect(pids.slice(0, 2)).toEqual([first.child.pid, first.child.pid]);
      expect(pids.slice(-3)).toEqual([second.child.pid, second.child.pid, second.child.pid]);
      await again.close();
    } finally {
      second.child.kill('SIGTERM');
    }
  });
});
