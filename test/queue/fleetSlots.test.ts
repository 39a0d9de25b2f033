// The shared run counts of queue workers (real Redis through BullMQ's client): a run's release waits for the
// worker's next acquire and goes in the same round trip, is sent on its own soon when no acquire comes, and is sent
// at once once the worker is stopping.
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

import { FleetSlots } from '../../src/executors/queue/FleetSlots.js';
import { isolatedQueue } from '../distributed/backends.js';
import { redisUrl } from '../distributed/suites.js';
import { eventually } from '../helpers/rawWire.js';

if (redisUrl) {
  const url = redisUrl;
  describe('FleetSlots releases', () => {
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    async function open() {
      const queue = isolatedQueue(url);
      const worker = new Worker(queue.name, async () => undefined, { connection: { url }, autorun: false });
      const admin = new Redis(url);
      cleanups.push(async () => {
        await worker.close();
        admin.disconnect();
        await queue.dispose();
      });
      const fleet = new FleetSlots(() => worker.getBackend().client, `bull:${queue.name}`, 60_000);
      const running = (owner = 'o') => admin.zrange(`bull:${queue.name}:owner-runs:${owner}`, 0, -1);
      return { fleet, running };
    }

    const share = [{ kind: 'owner' as const, name: 'o', limit: 1 }];

    it("go with the worker's next acquire, in the same call", async () => {
      const { fleet, running } = await open();
      expect(await fleet.acquire('a', share)).toBeUndefined();
      await fleet.release('a');
      // Not sent yet: 'a' still holds the owner's only slot...
      expect(await running()).toEqual(['a']);
      // ...until the next acquire carries its release: 'b' gets the slot.
      expect(await fleet.acquire('b', share)).toBeUndefined();
      expect(await running()).toEqual(['b']);
    });

    it('are sent on their own when no acquire comes', async () => {
      const { fleet, running } = await open();
      await fleet.acquire('a', share);
      await fleet.release('a');
      await eventually(async () => (await running()).length === 0, 2000);
      expect(await fleet.acquire('b', share)).toBeUndefined();
    });

    it('are sent at once while the worker stops', async () => {
      const { fleet, running } = await open();
      await fleet.acquire('a', share);
      await fleet.acquire('c', [{ kind: 'owner', name: 'p', limit: 1 }]);
      await fleet.release('a');
      await fleet.stopDeferring();
      expect(await running()).toEqual([]);
      expect(await running('p')).toEqual(['c']);
      await fleet.release('c');
      expect(await running('p')).toEqual([]);
    });

    it('refuses a run at the limit while the held run is not released', async () => {
      const { fleet } = await open();
      await fleet.acquire('a', share);
      expect(await fleet.acquire('b', share)).toEqual(share[0]);
    });
  });
}
