import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../../src/server/index.js';
import { eventually, HttpPeer } from '../../helpers/rawWire.js';

function createServer(): McpServer {
  const server = new McpServer({ name: 'standalone', version: '1.0.0' });
  server.registerTool('quick', { inputSchema: z.object({}) }, async () => ({
    content: [{ type: 'text', text: 'done' }],
  }));
  return server;
}

describe('notifications without a request on Streamable HTTP (the GET stream)', () => {
  let tasks: McpTasks | undefined;
  let http: HttpServerHandle | undefined;
  afterEach(async () => {
    await http?.close();
    await tasks?.close();
  });

  async function runTask(peer: HttpPeer): Promise<string> {
    const created = await peer.request('tools/call', { name: 'quick', arguments: {}, task: {} });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    await peer.request('tasks/result', { taskId });
    return taskId;
  }

  it('are not kept for a session that never opened the stream, and reach it once it does', async () => {
    tasks = await createMcpTasks({
      server: createServer,
      tools: { quick: { taskSupport: 'optional' } },
      store: 'memory',
    });
    // Answered request streams go at once: what stays in the event store is the GET stream's.
    http = await serveHttp(tasks, { port: 0, eventStore: { answeredRetentionMs: 0 } });
    const peer = new HttpPeer(http.url);
    await peer.initialize();
    for (let i = 0; i < 40; i++) await runTask(peer);
    // 40 tasks' status notifications (about 350 bytes each) would be held for a GET stream no one can resume.
    expect(http.handler.eventStoreBytes).toBeLessThan(2048);
    expect(peer.notifications.filter((n) => n.method === 'notifications/tasks/status')).toEqual([]);

    await peer.openNotificationStream();
    const taskId = await runTask(peer);
    await eventually(() =>
      peer.notifications.find(
        (n) =>
          n.method === 'notifications/tasks/status' &&
          n.params?.['taskId'] === taskId &&
          n.params?.['status'] === 'completed',
      ),
    );
    await peer.close();
  });
});
