// Two server processes share one SQLite file: a tasks/result waiting in one wakes as soon as the other completes the
// task, instead of at the engine's 5 s re-check (`npm run bench:sqlite-wake` reports the figure; asserted loosely).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, type HttpPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

describe('two servers sharing one SQLite file', () => {
  const servers: HttpFixture[] = [];
  const peers: HttpPeer[] = [];

  beforeAll(async () => {
    const env = { MCP_TASKS_STORE: join(tempDir(), 'shared.db') };
    for (let i = 0; i < 2; i++) {
      const server = await HttpFixture.start({ env });
      servers.push(server);
      const peer = await server.peer();
      await peer.initialize();
      peers.push(peer);
    }
  });
  afterAll(async () => {
    for (const peer of peers) await peer.close();
    for (const server of servers) await server.close();
  });

  it('wakes a tasks/result waiting in one process soon after the task completes in the other', async () => {
    const [a, b] = peers as [HttpPeer, HttpPeer];
    const gaps: number[] = [];
    for (let round = 0; round < 3; round++) {
      const created = await a.request('tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 1, label: `wake-${randomUUID()}` },
        task: {},
      });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      // The task runs in A's process; A's own waiter wakes on its in-process event, B's through the file.
      const here = a.request('tasks/result', { taskId }).then((response) => ({ response, at: Date.now() }));
      const there = b.request('tasks/result', { taskId }).then((response) => ({ response, at: Date.now() }));
      const [local, remote] = await Promise.all([here, there]);
      expect(remote.response.result).toEqual(local.response.result);
      expect(remote.response.result?.['content']).toBeDefined();
      gaps.push(remote.at - local.at);
    }
    // Within 100 ms on an idle machine (see the benchmark); loose here, far below the 5 s re-check.
    expect(Math.max(...gaps)).toBeLessThan(1500);
  });
});
