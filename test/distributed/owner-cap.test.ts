// The per-owner active-task cap holds across processes: two fixture servers on one shared store receive 120
// creations for one principal at once, and the store's atomic check lets exactly the cap through, on every store
// that processes can share.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, type HttpPeer, type Response } from '../helpers/rawWire.js';
import type { StoreBackend } from './backends.js';
import { TOKEN } from './cluster.js';
import { backends, unique } from './suites.js';

const CAP = 10;

for (const [storeName, openBackend] of backends(9, { sqlite: true })) {
  describe(`per-owner active cap across two server processes on the ${storeName} store`, () => {
    let backend: StoreBackend;
    const servers: HttpFixture[] = [];
    const peers: HttpPeer[] = [];

    beforeAll(async () => {
      backend = await openBackend();
      const env = {
        MCP_TASKS_STORE: backend.spec,
        MCP_TASKS_TEST_TOKENS: `${TOKEN}:cap-tests`,
        MCP_TASKS_MAX_ACTIVE: String(CAP),
        MCP_TASKS_RATE_LIMIT: '1000:1000',
      };
      for (let i = 0; i < 2; i++) {
        const server = await HttpFixture.start({ env });
        servers.push(server);
        const peer = await server.peer({ authorization: `Bearer ${TOKEN}` });
        await peer.initialize();
        peers.push(peer);
      }
    });
    afterAll(async () => {
      for (const peer of peers) await peer.close();
      for (const server of servers) await server.close();
      await backend?.dispose();
    });

    it('lets exactly the cap of 120 concurrent creations through, and refuses the rest with -32600', async () => {
      const label = unique('cap');
      const create = (peer: HttpPeer): Promise<Response> =>
        peer.request('tools/call', { name: 'slow_compute', arguments: { seconds: 120, label }, task: {} });
      const responses = await Promise.all(Array.from({ length: 120 }, (_, i) => create(peers[i % 2] as HttpPeer)));
      const created = responses.filter((r) => r.result !== undefined);
      const refused = responses.filter((r) => r.error !== undefined);
      for (const r of refused) {
        expect(r.error?.code).toBe(-32600);
        expect(r.error?.message).toMatch(/Too many active tasks for this caller \(limit 10\)/);
      }
      // No task finishes meanwhile, so the cap is both the most let through and (no false refusals) the least.
      expect(created).toHaveLength(CAP);
      expect(refused).toHaveLength(120 - CAP);
      // Both processes took part in the race.
      const ids = created.map((r) => (r.result?.['task'] as { taskId: string }).taskId);
      const listed = await peers[1]?.request('tasks/list', {});
      const working = ((listed?.result?.['tasks'] as Array<{ taskId: string; status: string }>) ?? []).filter(
        (task) => task.status === 'working',
      );
      expect(working.map((task) => task.taskId).sort()).toEqual([...ids].sort());
      // A cancellation frees a slot for the next creation, through the other process.
      await peers[0]?.request('tasks/cancel', { taskId: ids[0] });
      expect((await create(peers[1] as HttpPeer)).result).toBeDefined();
      expect((await create(peers[0] as HttpPeer)).error?.code).toBe(-32600);
      for (const taskId of ids) await peers[0]?.request('tasks/cancel', { taskId });
    });
  });
}
