// Fair sharing and per-tool limits at the wire, with real processes: two principals on one fixture server running
// tasks in-process, and on a fixture server feeding fixture workers through BullMQ.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, type HttpPeer } from '../helpers/rawWire.js';
import { isolatedQueue, sqliteBackend, type StoreBackend } from './backends.js';
import { Cluster } from './cluster.js';
import { core20251125 as wire } from './dialects.js';
import { redisUrl, unique } from './suites.js';

const TOKENS = 'token-alice:alice,token-bob:bob';
const bearer = (name: string) => ({ authorization: `Bearer token-${name}` });

/** Alice fills the slots with 16 long tasks; Bob's quick task must still finish while all of hers run. */
async function oneOwnerCannotStarveAnother(alice: HttpPeer, bob: HttpPeer): Promise<void> {
  const label = unique('long');
  const long: string[] = [];
  for (let i = 0; i < 16; i++) long.push(await wire.create(alice, 'slow_compute', { seconds: 120, label }));
  const quick = await wire.create(bob, 'slow_compute', { seconds: 0, label: 'quick' });
  const outcome = await wire.result(bob, quick);
  expect(outcome.content).toEqual([{ type: 'text', text: 'Computed quick in 0s' }]);
  for (const taskId of long) expect((await wire.get(alice, taskId)).status).toBe('working');
  for (const taskId of long) await wire.cancel(alice, taskId);
}

describe('fair sharing at the wire, in-process executor', () => {
  let fixture: HttpFixture;
  const peers: HttpPeer[] = [];

  beforeAll(async () => {
    fixture = await HttpFixture.start({ env: { MCP_TASKS_TEST_TOKENS: TOKENS } });
    for (const name of ['alice', 'bob']) {
      const peer = await fixture.peer(bearer(name));
      await wire.initialize(peer);
      peers.push(peer);
    }
  });
  afterAll(async () => {
    for (const peer of peers) await peer.close();
    await fixture?.close();
  });

  it("one principal's 16 long tasks do not keep another's 0-second task waiting", async () => {
    await oneOwnerCannotStarveAnother(peers[0] as HttpPeer, peers[1] as HttpPeer);
  });
});

if (redisUrl) {
  const queueRedis = redisUrl;

  /** A fixture server and `workers` fixture workers on a SQLite store, with peers for alice and bob. */
  function queueCluster(workers: number, env: Record<string, string> = {}) {
    const state = { peers: [] as HttpPeer[] } as { cluster: Cluster; peers: HttpPeer[] };
    let backend: StoreBackend;
    let queue: ReturnType<typeof isolatedQueue>;
    beforeAll(async () => {
      backend = await sqliteBackend();
      queue = isolatedQueue(queueRedis);
      state.cluster = await Cluster.start({
        store: backend.spec,
        redisUrl: queueRedis,
        queue: queue.name,
        servers: 1,
        workers,
        env: { MCP_TASKS_TEST_TOKENS: TOKENS, ...env },
      });
      for (const name of ['alice', 'bob']) {
        const peer = await (state.cluster.servers[0] as HttpFixture).peer(bearer(name));
        await wire.initialize(peer);
        state.peers.push(peer);
      }
    });
    afterAll(async () => {
      for (const peer of state.peers) await peer.close();
      await state.cluster?.close();
      await queue?.dispose();
      await backend?.dispose();
    });
    return state;
  }

  describe('fair sharing at the wire, queue workers on BullMQ', () => {
    const { peers } = queueCluster(1);

    it("one principal's 16 long tasks on a 16-slot worker do not keep another's 0-second task waiting", async () => {
      await oneOwnerCannotStarveAnother(peers[0] as HttpPeer, peers[1] as HttpPeer);
    });
  });

  describe('per-tool concurrency at the wire, across two queue workers', () => {
    const state = queueCluster(2, { MCP_TASKS_TOOL_CONCURRENCY: 'slow_compute:2' });

    it('never runs more than the tool policy allows at once, counted in the tool, and every task completes', async () => {
      const label = unique('limited');
      const tasks: Array<[HttpPeer, string]> = [];
      for (let i = 0; i < 8; i++) {
        const peer = state.peers[i % 2] as HttpPeer;
        tasks.push([peer, await wire.create(peer, 'slow_compute', { seconds: 0.4, label })]);
      }
      for (const [peer, taskId] of tasks) {
        expect((await wire.result(peer, taskId)).content).toEqual([
          { type: 'text', text: `Computed ${label} in 0.4s` },
        ]);
      }
      // The workers append every start and end to one file, in the order they happen.
      let running = 0;
      let peak = 0;
      const events = state.cluster.toolEventsFor(label);
      for (const event of events) {
        running += event.event === 'start' ? 1 : -1;
        peak = Math.max(peak, running);
      }
      expect(events.filter((event) => event.event === 'start')).toHaveLength(8);
      expect(new Set(events.map((event) => event.pid)).size).toBe(2);
      expect(peak).toBe(2);
    });
  });
}
