import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startMcpRemote, type McpRemote } from '../../bench/servers/mcpRemote.js';
import { HttpFixture } from '../helpers/rawWire.js';

/**
 * `mcp-remote@0.15.1`, the stdio bridge desktop hosts use to reach remote servers, in front of our HTTP endpoint:
 * it starts promptly (it probes `GET /mcp` without a session, which must be answered at once), and 2025-11-25
 * tasks, with elicitation, travel through it. `npm run bench:mcp-remote` compares its start-up with server-everything.
 */
describe('interop: mcp-remote 0.15.1 in front of the HTTP server', () => {
  let fixture: HttpFixture;
  let remote: McpRemote;

  beforeAll(async () => {
    fixture = await HttpFixture.start();
    remote = await startMcpRemote(fixture.url, { elicitation: {} });
  });
  afterAll(async () => {
    await remote?.close();
    await fixture?.close();
  });

  it('starts without waiting on the server (loose bound: a hanging probe costs 10 s or more)', () => {
    expect(remote.startupMs).toBeLessThan(8_000);
  });

  it('lists the tools with their task support', async () => {
    const listed = await remote.request('tools/list');
    const tools = listed.result?.['tools'] as Array<{ name: string; execution?: { taskSupport?: string } }>;
    expect(tools.find((tool) => tool.name === 'slow_compute')?.execution?.taskSupport).toBe('optional');
    expect(tools.find((tool) => tool.name === 'failing_job')?.execution?.taskSupport).toBe('required');
  });

  it('carries a task: creation, tasks/get and the blocking tasks/result', async () => {
    const created = await remote.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0.3, label: 'bridged' },
      task: {},
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    expect(typeof taskId).toBe('string');
    const status = (await remote.request('tasks/get', { taskId })).result?.['status'];
    expect(['working', 'completed']).toContain(status);
    const result = await remote.request('tasks/result', { taskId });
    expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Computed bridged in 0.3s' }]);
  });

  it("forwards a task's elicitation to the host and its answer back", async () => {
    const asked: string[] = [];
    remote.onRequest = (method, params) => {
      asked.push(`${method}: ${String(params['message'])}`);
      return { action: 'accept', content: { confirm: true } };
    };
    try {
      const created = await remote.request('tools/call', {
        name: 'confirm_delete',
        arguments: { filename: 'bridge.txt' },
        task: {},
      });
      const taskId = (created.result?.['task'] as { taskId: string }).taskId;
      const result = await remote.request('tasks/result', { taskId });
      expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Deleted bridge.txt' }]);
      expect(asked).toEqual(['elicitation/create: Delete bridge.txt?']);
    } finally {
      remote.onRequest = undefined;
    }
  });
});
