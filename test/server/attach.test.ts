import { McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { createMcpTasks, type McpTasks, type ServerLike } from '../../src/server/index.js';

/** What the tools observed, shared by every instance the factory builds. */
interface Observed {
  started: number;
  aborted: string[];
}

function v1Server(observed: Observed): McpServerV1 {
  const server = new McpServerV1({ name: 'v1-server', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echo', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: `v1:${text}` }],
  }));
  server.registerTool('wait', { description: 'Waits until aborted', inputSchema: {} }, async (_args, extra) => {
    observed.started++;
    await new Promise((_, reject) =>
      extra.signal.addEventListener('abort', () => {
        observed.aborted.push('v1');
        reject(new Error('aborted'));
      }),
    );
    return { content: [] };
  });
  return server;
}

function v2Server(observed: Observed): McpServerV2 {
  const server = new McpServerV2({ name: 'v2-server', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text: `v2:${text}` }] }),
  );
  server.registerTool('wait', { description: 'Waits until aborted', inputSchema: z.object({}) }, async (_args, ctx) => {
    observed.started++;
    await new Promise((_, reject) =>
      ctx.mcpReq.signal.addEventListener('abort', () => {
        observed.aborted.push('v2');
        reject(new Error('aborted'));
      }),
    );
    return { content: [] };
  });
  return server;
}

const builds: Array<[string, (observed: Observed) => ServerLike]> = [
  ['SDK 1.32 (v1)', v1Server],
  ['SDK 2.x (v2)', v2Server],
];

describe('attaching tasks to a server built with the official SDK', () => {
  let tasks: McpTasks | undefined;
  afterEach(async () => {
    await tasks?.close();
    tasks = undefined;
  });

  for (const [label, build] of builds) {
    it(`${label}: the same attach code adds tasks, runs them and aborts a cancelled handler`, async () => {
      const observed: Observed = { started: 0, aborted: [] };
      tasks = await createMcpTasks({
        server: () => build(observed),
        tools: { echo: 'optional', wait: 'optional' },
        store: 'memory',
      });
      const server = tasks.attach(build(observed));
      const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
      await server.connect(serverEnd);
      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(clientEnd);

      expect(client.getServerCapabilities()?.tasks).toEqual({
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'echo')?.execution).toEqual({ taskSupport: 'optional' });

      // Plain MCP behaviour is untouched.
      expect((await client.callTool({ name: 'echo', arguments: { text: 'plain' } })).content).toEqual([
        { type: 'text', text: `${label.includes('v1') ? 'v1' : 'v2'}:plain` },
      ]);

      const messages = [];
      for await (const message of client.experimental.tasks.callToolStream(
        { name: 'echo', arguments: { text: 'task' } },
        undefined,
        { task: {} },
      ))
        messages.push(message);
      expect(messages[0]?.type).toBe('taskCreated');
      expect(messages.at(-1)).toMatchObject({
        type: 'result',
        result: { content: [{ type: 'text', text: `${label.includes('v1') ? 'v1' : 'v2'}:task` }] },
      });

      // spec R50: cancelling fires the running handler's AbortSignal.
      const created = (await client.request(
        { method: 'tools/call', params: { name: 'wait', arguments: {}, task: {} } },
        z.object({ task: z.object({ taskId: z.string() }) }).loose() as never,
      )) as { task: { taskId: string } };
      await waitFor(() => observed.started === 1);
      const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
      expect(cancelled.status).toBe('cancelled');
      await waitFor(() => observed.aborted.length > 0);
      expect(observed.aborted).toEqual([label.includes('v1') ? 'v1' : 'v2']);
      await client.close();
    });
  }
});

async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!(await predicate())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
