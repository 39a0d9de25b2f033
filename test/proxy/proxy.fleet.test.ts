import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf } from '../../src/client/index.js';
import { requireService } from '../helpers/services.js';
import { EVERYTHING_STDIO, startProxyProcess, type ProxyProcess } from './helpers/proxyProcess.js';

/**
 * Two gateways sharing a Redis store and a BullMQ queue, each in front of its own server-everything: a task created
 * through one is run by whichever takes the job and is followed to its result through the other.
 */
const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');

if (redisUrl) {
  describe('a fleet of gateways on Redis', () => {
    const proxies: ProxyProcess[] = [];
    const clients: TaskClient[] = [];
    const queue = `gateway-${randomUUID()}`;

    beforeAll(async () => {
      for (let i = 0; i < 2; i++) {
        proxies.push(
          await startProxyProcess([
            '--store',
            redisUrl,
            '--redis',
            redisUrl,
            '--queue',
            queue,
            '--',
            ...EVERYTHING_STDIO,
          ]),
        );
      }
    });
    afterAll(async () => {
      for (const client of clients) await client.close();
      for (const proxy of proxies) await proxy.stop();
    });

    it('creates on one gateway and follows the task to its result on the other', async () => {
      const [a, b] = proxies as [ProxyProcess, ProxyProcess];
      const first = await TaskClient.connect({ url: a.url }, { dialect: 'ext-2026' });
      const second = await TaskClient.connect({ url: b.url }, { dialect: 'ext-2026' });
      clients.push(first, second);
      const handle = await first.callTool('trigger-long-running-operation', { duration: 1, steps: 2 });
      expect(handle.isTask).toBe(true);
      const elsewhere = await second.attach(handle.taskId as string);
      expect(textOf(await elsewhere.result())).toContain('Long running operation completed');
    });
  });
}
