import { describe, expect, it } from 'vitest';

import { HttpFixture, eventually } from '../helpers/rawWire.js';

describe('stored tasks per owner (finished ones included)', () => {
  it('refuses a creation past the cap with -32600 and data.limit, and takes it again once a task expires', async () => {
    const fixture = await HttpFixture.start({ env: { MCP_TASKS_MAX_STORED: '2' } });
    try {
      const peer = await fixture.peer();
      await peer.initialize();
      const create = (ttl?: number) =>
        peer.request('tools/call', {
          name: 'slow_compute',
          arguments: { seconds: 0, label: 'cap' },
          task: ttl === undefined ? {} : { ttl },
        });
      const ids: string[] = [];
      for (const ttl of [1000, undefined]) {
        const response = await create(ttl);
        expect(response.error, JSON.stringify(response.error)).toBeUndefined();
        ids.push((response.result?.['task'] as { taskId: string }).taskId);
      }
      // Both finish: the cap counts finished tasks too, unlike the active-task limit.
      for (const taskId of ids) {
        await eventually(async () => {
          const got = await peer.request('tasks/get', { taskId });
          return got.result?.['status'] === 'completed' ? true : undefined;
        });
      }
      const refused = await create();
      expect(refused.error?.code).toBe(-32600);
      expect(refused.error?.message).toMatch(
        /Too many stored tasks for this caller \(limit 2, finished tasks included\)/,
      );
      expect(refused.error?.data).toEqual({ limit: 'stored_tasks' });
      // The first task's 1 s ttl runs out; the refused creation sweeps it and succeeds.
      await eventually(async () => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        return (await create()).result;
      });
    } finally {
      await fixture.close();
    }
  });
});
