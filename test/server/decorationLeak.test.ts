import { McpServer } from '@modelcontextprotocol/server';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';

import { createMcpTasks, type McpTasks } from '../../src/server/index.js';
import type { TaskConnection } from '../../src/server/connection/TaskConnection.js';

type Message = { id?: number; result?: Record<string, unknown>; error?: { code: number } };

describe('error answers to decorated requests', () => {
  let tasks: McpTasks | undefined;
  afterEach(async () => {
    await tasks?.close();
    tasks = undefined;
  });

  it('leave no tracking entry behind: 500 failed initialize and tools/list answers keep the map empty', async () => {
    // A server without tools has no tools/list handler: every tools/list is answered with an error.
    const createServer = () => new McpServer({ name: 'no-tools', version: '1.0.0' });
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory' });
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    const connection = tasks.wrapTransport(serverEnd as never) as TaskConnection;
    await createServer().connect(connection as never);
    const answers = new Map<number, Message>();
    clientEnd.onmessage = (message) => void answers.set((message as Message).id as number, message as Message);
    await clientEnd.start();
    let id = 0;
    const ask = async (method: string, params?: Record<string, unknown>) => {
      const asked = ++id;
      await clientEnd.send({ jsonrpc: '2.0', id: asked, method, ...(params && { params }) } as never);
      for (let tries = 0; !answers.has(asked) && tries < 1000; tries++) await new Promise((r) => setTimeout(r, 1));
      return answers.get(asked) as Message;
    };

    const initialized = await ask('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'leak-test', version: '1' },
    });
    expect(initialized.result?.['protocolVersion']).toBe('2025-11-25');
    for (let i = 0; i < 250; i++) {
      expect((await ask('tools/list')).error?.code).toBe(-32601);
      // Missing clientInfo and capabilities: the SDK refuses the params.
      expect((await ask('initialize', { protocolVersion: 42 })).error?.code).toBeDefined();
    }
    expect(connection.pendingDecorations).toBe(0);
    // Decoration still works for a successful answer afterwards.
    expect((await ask('ping')).result).toEqual({});
    expect(connection.pendingDecorations).toBe(0);
    await clientEnd.close();
  });
});
