import { randomUUID } from 'node:crypto';

import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';

import { createMcpTasks, createTasksHttpHandler, McpTasks, serveHttp, type HttpServerHandle } from 'mcp-tasks';
import { queueExecutor } from 'mcp-tasks/worker';
import { HttpPeer } from '../helpers/rawWire.js';
import { requireService } from '../helpers/services.js';

const redisUrl = requireService('Redis', 'MCP_TASKS_TEST_REDIS_URL');

function serverNamed(name: string) {
  return () => {
    const server = new McpServer({ name, version: '1.0.0' });
    server.registerTool('echo', { description: 'Answers hi' }, async () => ({
      content: [{ type: 'text', text: 'hi' }],
    }));
    return server;
  };
}

const serverInfoOf = async (url: string) => {
  const peer = new HttpPeer(url);
  const info = (await peer.initialize()).result?.['serverInfo'];
  await peer.close();
  return info;
};

describe('the front door', () => {
  let tasks: McpTasks | undefined;
  let http: HttpServerHandle | undefined;
  afterEach(async () => {
    await http?.close();
    await tasks?.close();
    http = tasks = undefined;
  });

  it('McpTasks shows its public members only; the runtime behind it is not reachable from the instance', async () => {
    tasks = await createMcpTasks({ server: serverNamed('shape'), tools: { echo: 'optional' }, store: 'memory' });
    expect(Object.getOwnPropertyNames(McpTasks.prototype).sort()).toEqual([
      'attach',
      'close',
      'connectionCount',
      'constructor',
      'emitEvent',
      'engine',
      'metrics',
      'wrapFactory',
      'wrapTransport',
    ]);
    expect(Object.keys(tasks)).toEqual([]);
    for (const internal of ['dialects', 'executor', 'heldCalls', 'policyFor', 'checkRate', 'register', 'logger'])
      expect(internal in tasks).toBe(false);
    expect(tasks.engine.store).toBeDefined();
    expect(tasks.metrics).toBeUndefined();
  });

  it('serveHttp(tasks, options) serves the server factory the runtime was created with', async () => {
    tasks = await createMcpTasks({ server: serverNamed('from-tasks'), tools: { echo: 'optional' }, store: 'memory' });
    http = await serveHttp(tasks, { port: 0 });
    expect(await serverInfoOf(http.url)).toMatchObject({ name: 'from-tasks' });
  });

  it("serveHttp(tasks, { server }) serves another factory's instances on the same runtime", async () => {
    tasks = await createMcpTasks({ server: serverNamed('from-tasks'), tools: { echo: 'optional' }, store: 'memory' });
    http = await serveHttp(tasks, { port: 0, server: serverNamed('given') });
    expect(await serverInfoOf(http.url)).toMatchObject({ name: 'given' });
  });

  it('a call in the removed serveHttp(tasks, factory, options) shape is refused, naming the server option', async () => {
    tasks = await createMcpTasks({ server: serverNamed('from-tasks'), tools: { echo: 'optional' }, store: 'memory' });
    const call = serveHttp as unknown as (...args: unknown[]) => Promise<HttpServerHandle>;
    await expect(call(tasks, serverNamed('given'), { port: 0 })).rejects.toThrow(
      /serveHttp\(tasks, options\): the second argument is the options object.*\{ server: factory/,
    );
    expect(() =>
      (createTasksHttpHandler as unknown as (...args: unknown[]) => unknown)(tasks, serverNamed('given'), {}),
    ).toThrow(/createTasksHttpHandler\(tasks, \{ server: factory/);
  });
});

if (redisUrl) {
  describe('the executor asked, not its class', () => {
    let tasks: McpTasks | undefined;
    let http: HttpServerHandle | undefined;
    afterEach(async () => {
      await http?.close();
      await tasks?.close();
    });

    it("the console's overview shows the queue executor's queue (its queueStats), workers or none", async () => {
      tasks = await createMcpTasks({
        server: serverNamed('queued'),
        tools: { echo: 'optional' },
        store: 'memory',
        // A queue of its own and no worker: what is submitted waits.
        executor: queueExecutor({ redisUrl, queueName: `front-door-${randomUUID()}` }),
      });
      for (let i = 0; i < 3; i++)
        await tasks.engine.create({
          owner: 'front-door',
          request: { method: 'tools/call', params: { name: 'echo', arguments: {} } },
          dialect: 'test',
        });
      const token = 'front-door-console-token';
      http = await serveHttp(tasks, { port: 0, console: { token } });
      const origin = new URL(http.url).origin;
      const login = await fetch(`${origin}/console?token=${token}`, { redirect: 'manual' });
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const overview = await fetch(`${origin}/console/api/overview`, { headers: { cookie } });
      expect(overview.status).toBe(200);
      expect(((await overview.json()) as { queue?: unknown }).queue).toEqual({
        waiting: 3,
        active: 0,
        delayed: 0,
        workers: [],
      });
    });
  });
}
