// The owners view's stored bytes and refusals, over every store, and the bounds of what it keeps in memory: the
// refusals of at most MAX_REFUSED_OWNERS owners, and an hour of queue readings.
import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { createMcpTasks, serveHttp } from '../../src/server/index.js';

import { TaskLimitError, type TaskEngine } from '../../src/engine/index.js';
import { OwnerRefusals } from '../../src/engine/core/OwnerRefusals.js';
import { QueueDepthHistory, QUEUE_SAMPLES } from '../../src/console/QueueDepthHistory.js';
import { readOwners, type Owners } from '../../src/console/readOwners.js';
import { startEngine } from '../helpers/engines.js';
import { HttpPeer } from '../helpers/rawWire.js';
import { eachStore } from '../stores/eachStore.js';

const TOKEN = 'owners-view-console-token';
const request = (n: number) => ({
  method: 'tools/call',
  params: { name: 'paint', arguments: { n, pad: 'x'.repeat(n) } },
});

eachStore(
  'owners',
  async (store) => store,
  (name, harness) => {
    describe(`the owners view over ${name}`, () => {
      let engine: TaskEngine | undefined;
      afterEach(async () => {
        await engine?.close();
      });

      it("shows each owner's stored bytes as the store counts them, and its refusals at a limit", async () => {
        const started = await startEngine(await harness.create(), { limits: { maxActivePerOwner: 2 } });
        engine = started;
        const create = (owner: string, n: number) =>
          started.create({ owner, request: request(n), dialect: 'core-2025-11-25', run: false });
        await create('alice', 100);
        await create('alice', 2000);
        await create('bob', 10);
        const refused = await create('alice', 5).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(TaskLimitError);

        const { store } = started;
        const now = Date.now();
        const view = await readOwners(store.browse as NonNullable<typeof store.browse>, now, {
          ...(store.storedBytesOf && { storedBytesOf: store.storedBytesOf.bind(store) }),
          refusedOwners: () => started.refusedOwners(),
        });
        const alice = view.owners.find((o) => o.owner === 'alice');
        const bob = view.owners.find((o) => o.owner === 'bob');
        expect(alice?.refused).toEqual({ concurrent_tasks: 1 });
        expect(bob?.refused).toEqual({});
        const aliceBytes = alice?.storedBytes ?? 0;
        const bobBytes = bob?.storedBytes ?? 0;
        // Alice's two records carry 2,100 characters of arguments; Bob's one, 10.
        expect(aliceBytes).toBeGreaterThan(bobBytes + 2000);
        expect(bobBytes).toBeGreaterThan(10);
        expect(aliceBytes + bobBytes).toBe(await store.storedBytes?.());
      });
    });
  },
);

describe('what the owners view keeps in memory', () => {
  it('counts refusals for a bounded number of owners, forgetting the least recently refused', () => {
    const refusals = new OwnerRefusals(3);
    for (const owner of ['a', 'b', 'c']) refusals.note(owner, 'rate');
    refusals.note('a', 'stored_bytes');
    refusals.note('d', 'concurrent_tasks');
    expect(refusals.entries()).toEqual([
      { owner: 'd', refused: { concurrent_tasks: 1 } },
      { owner: 'a', refused: { rate: 1, stored_bytes: 1 } },
      { owner: 'c', refused: { rate: 1 } },
    ]);
    expect(refusals.of('b')).toEqual({});
  });

  it('keeps an hour of queue readings in a ring, oldest first', async () => {
    let now = 1_000_000_000;
    let waiting = 0;
    const history = new QueueDepthHistory({ load: () => ({ running: 1, waiting }) }, () => now);
    expect(history.available).toBe(true);
    for (let i = 0; i < QUEUE_SAMPLES * 2; i++) {
      waiting = i;
      await history.sample();
      now += 30_000;
    }
    const samples = history.lastHour();
    expect(samples.length).toBeLessThanOrEqual(QUEUE_SAMPLES);
    expect(samples.length).toBeGreaterThanOrEqual(QUEUE_SAMPLES - 1);
    expect(samples.map((s) => s.waiting)).toEqual(
      Array.from({ length: samples.length }, (_, i) => QUEUE_SAMPLES * 2 - samples.length + i),
    );
    expect(samples.every((s) => s.at >= now - 3600_000 && s.running === 1)).toBe(true);
    expect(new QueueDepthHistory({}, () => now).available).toBe(false);
  });
});

describe('refusals by the server’s rate limit, in the owners view', () => {
  it('counts a creation the rate limit refused against its owner', async () => {
    const createServer = () => {
      const server = new McpServer({ name: 'owners-rate', version: '1.0.0' });
      server.registerTool('quick', { inputSchema: z.object({}) }, async () => ({ content: [] }));
      return server;
    };
    const tasks = await createMcpTasks({
      server: createServer,
      tools: { quick: 'optional' },
      store: 'memory',
      // One creation, then none for a long while.
      rateLimit: { perSecond: 100, burst: 100, creations: { perSecond: 0.001, burst: 1 } },
    });
    const http = await serveHttp(tasks, { port: 0, console: { token: TOKEN } });
    const peer = new HttpPeer(http.url);
    try {
      await peer.initialize();
      const create = () => peer.request('tools/call', { name: 'quick', arguments: {}, task: {} });
      const first = await create();
      const taskId = (first.result?.['task'] as { taskId: string }).taskId;
      const owner = (await tasks.engine.store.get(taskId))?.owner as string;
      const refused = await create();
      expect(refused.error).toBeDefined();
      const response = await fetch(`${new URL(http.url).origin}/console/api/owners`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const view = (await response.json()) as Owners;
      expect(view.owners.find((o) => o.owner === owner)?.refused).toEqual({ rate: 1 });
      // The in-process executor is read for the queue chart from the start.
      expect(view.queue?.length).toBeGreaterThanOrEqual(1);
    } finally {
      await peer.close();
      await http.close();
      await tasks.close();
    }
  });
});
