// Fair sharing and per-tool limits at the wire, with real processes: two principals on one fixture server running
// tasks in-process, and on a fixture server feeding fixture workers through BullMQ.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, type HttpPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { isolatedQueue, sqliteBackend, type StoreBackend } from './backends.js';
import { Cluster, type ToolEvent } from './cluster.js';
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

/**
 * Eight tasks of a tool limited to 2, from two principals: all complete, and the tool's own start/end records (appended
 * to one file in the order they happen) never show more than 2 runs at once. Returns the pids that ran them.
 */
async function neverMoreThanTheToolLimit(
  peers: HttpPeer[],
  eventsFor: (label: string) => ToolEvent[],
): Promise<Set<number>> {
  const label = unique('limited');
  const tasks: Array<[HttpPeer, string]> = [];
  for (let i = 0; i < 8; i++) {
    const peer = peers[i % 2] as HttpPeer;
    tasks.push([peer, await wire.create(peer, 'slow_compute', { seconds: 0.4, label })]);
  }
  for (const [peer, taskId] of tasks) {
    expect((await wire.result(peer, taskId)).content).toEqual([{ type: 'text', text: `Computed ${label} in 0.4s` }]);
  }
  let running = 0;
  let peak = 0;
  const events = eventsFor(label);
  for (const event of events) {
    running += event.event === 'start' ? 1 : -1;
    peak = Math.max(peak, running);
  }
  expect(events.filter((event) => event.event === 'start')).toHaveLength(8);
  expect(peak).toBe(2);
  return new Set(events.map((event) => event.pid));
}

/** An HTTP fixture running tasks in-process, with peers for alice and bob. */
function inProcessFixture(env: Record<string, string> = {}) {
  const state = { peers: [] as HttpPeer[] } as { fixture: HttpFixture; peers: HttpPeer[] };
  beforeAll(async () => {
    state.fixture = await HttpFixture.start({ env: { MCP_TASKS_TEST_TOKENS: TOKENS, ...env } });
    for (const name of ['alice', 'bob']) {
      const peer = await state.fixture.peer(bearer(name));
      await wire.initialize(peer);
      state.peers.push(peer);
    }
  });
  afterAll(async () => {
    for (const peer of state.peers) await peer.close();
    await state.fixture?.close();
  });
  return state;
}

describe('fair sharing at the wire, in-process executor', () => {
  const { peers } = inProcessFixture();

  it("one principal's 16 long tasks do not keep another's 0-second task waiting", async () => {
    await oneOwnerCannotStarveAnother(peers[0] as HttpPeer, peers[1] as HttpPeer);
  });
});

describe('per-tool concurrency at the wire, in-process executor', () => {
  const toolEvents = join(tempDir(), 'tool-events.jsonl');
  const { peers } = inProcessFixture({
    MCP_TASKS_TOOL_CONCURRENCY: 'slow_compute:2',
    MCP_TASKS_TOOL_EVENTS: toolEvents,
  });

  it('never runs more than the tool policy allows at once, counted in the tool, and every task completes', async () => {
    const eventsFor = (label: string) =>
      readFileSync(toolEvents, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ToolEvent)
        .filter((event) => event.arguments['label'] === label);
    await neverMoreThanTheToolLimit(peers, eventsFor);
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
      const pids = await neverMoreThanTheToolLimit(state.peers, (label) => state.cluster.toolEventsFor(label));
      expect(pids.size).toBe(2);
    });
  });
}
