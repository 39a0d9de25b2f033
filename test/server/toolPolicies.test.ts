import { McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';

import { createMcpTasks } from '../../src/server/index.js';
import { runWorker } from '../../src/server/worker/index.js';

describe('tool policy concurrency', () => {
  for (const concurrency of [0, -1, 1.5, Number.NaN]) {
    it(`refuses concurrency ${concurrency} when the runtime is created`, async () => {
      await expect(
        createMcpTasks({
          server: () => new McpServer({ name: 's', version: '1' }),
          tools: { crunch: { taskSupport: 'optional', concurrency } },
          store: 'memory',
        }),
      ).rejects.toThrow(`Tool policy of "crunch": concurrency must be a positive integer, got ${concurrency}`);
    });
  }

  it('refuses it in a worker too, before connecting to anything', async () => {
    await expect(
      runWorker({
        server: () => new McpServer({ name: 's', version: '1' }),
        store: 'memory',
        redisUrl: 'redis://127.0.0.1:1',
        tools: { crunch: { taskSupport: 'optional', concurrency: 0 } },
      }),
    ).rejects.toThrow('Tool policy of "crunch": concurrency must be a positive integer, got 0');
  });
});
