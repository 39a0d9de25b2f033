import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf } from '../../src/client/index.js';
import { HttpFixture } from '../helpers/rawWire.js';

/** TaskClient against a server whose rate limits refuse part of what it sends: it waits as told and retries. */
describe('TaskClient honours error.data.retryAfterMs', () => {
  let fixture: HttpFixture;
  beforeAll(async () => {
    // Operations 2/s (bursts of 3), creations 1/s (bursts of 2), waits 1/s (bursts of 2).
    fixture = await HttpFixture.start({ env: { MCP_TASKS_RATE_LIMIT: '2:3:1:2:1:2' } });
  });
  afterAll(async () => fixture.close());

  for (const dialect of ['2025-11-25', 'ext-2026', 'sep-1686'] as const) {
    it(`${dialect}: five tasks started at once over a quota of two all complete, later than the quota allows`, async () => {
      const client = await TaskClient.connect({ url: fixture.url }, { dialect });
      try {
        const started = Date.now();
        const handles = await Promise.all(
          Array.from({ length: 5 }, (_, i) => client.callTool('slow_compute', { seconds: 0, label: `t${i}` })),
        );
        const texts = await Promise.all(handles.map(async (handle) => textOf(await handle.result())));
        expect(texts.sort()).toEqual([0, 1, 2, 3, 4].map((i) => `Computed t${i} in 0s`));
        // Three creations beyond the burst at one per second: the client waited about that long instead of failing.
        expect(Date.now() - started).toBeGreaterThan(1500);
      } finally {
        await client.close();
      }
    });
  }
});
