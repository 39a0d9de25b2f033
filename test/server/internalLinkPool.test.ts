import { afterEach, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { countingFactory } from '../helpers/countingFactory.js';
import { eventually, HttpPeer, type Response } from '../helpers/rawWire.js';

const TOOLS = { echo: 'optional', ask: 'optional', hang: 'optional' } as const;

describe('task runs reuse instances of the author server (InternalLinkPool)', () => {
  let tasks: McpTasks | undefined;
  let http: HttpServerHandle | undefined;
  afterEach(async () => {
    await http?.close();
    await tasks?.close();
    http = tasks = undefined;
  });

  async function start(freshServerPerTask: boolean) {
    const { factory, counter } = countingFactory();
    tasks = await createMcpTasks({ server: factory, tools: TOOLS, store: 'memory', freshServerPerTask });
    http = await serveHttp(tasks, { port: 0 });
    const peer = new HttpPeer(http.url);
    await peer.initialize();
    // The session's own instance.
    const base = counter.instances;
    return { peer, counter, base };
  }

  async function run(peer: HttpPeer, name: string, args: Record<string, unknown>): Promise<Response> {
    const created = await peer.request('tools/call', { name, arguments: args, task: {} });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    return peer.request('tasks/result', { taskId });
  }

  it('runs 20 tasks one after another on one instance, and on 20 with freshServerPerTask', async () => {
    const pooled = await start(false);
    for (let i = 0; i < 20; i++) {
      const result = await run(pooled.peer, 'echo', { text: `n${i}` });
      expect(result.result?.['content']).toEqual([{ type: 'text', text: `n${i}` }]);
    }
    expect(pooled.counter.instances - pooled.base).toBe(1);
    await pooled.peer.close();
    await http?.close();
    await tasks?.close();
    // Closing the runtime closes the kept instance too.
    expect(pooled.counter.closed).toBeGreaterThanOrEqual(1);

    const fresh = await start(true);
    for (let i = 0; i < 20; i++) await run(fresh.peer, 'echo', { text: `n${i}` });
    expect(fresh.counter.instances - fresh.base).toBe(20);
    await eventually(() => fresh.counter.closed >= 20);
    await fresh.peer.close();
  });

  it('keeps each task its own input requests when tasks run at once on kept instances', async () => {
    const { peer, counter, base } = await start(false);
    peer.onServerRequest = (request) => ({
      action: 'accept',
      content: { answer: `answer to ${String((request.params as { message: string }).message)}` },
    });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => run(peer, 'ask', { question: `q${i}` })));
    results.forEach((result, i) =>
      expect(result.result?.['content']).toEqual([
        { type: 'text', text: `q${i} → ${JSON.stringify({ answer: `answer to q${i}` })}` },
      ]),
    );
    // At most one instance per task running at once, and they are kept for the next ones.
    const used = counter.instances - base;
    expect(used).toBeLessThanOrEqual(6);
    for (let i = 0; i < 6; i++) await run(peer, 'ask', { question: `again${i}` });
    expect(counter.instances - base).toBe(used);
    await peer.close();
  });

  it('does not reuse the instance of a cancelled task: its tool got the abort, the next task gets another', async () => {
    const { peer, counter, base } = await start(false);
    const created = await peer.request('tools/call', { name: 'hang', arguments: {}, task: {} });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    await eventually(() => counter.instances - base === 1);
    const cancelled = await peer.request('tasks/cancel', { taskId });
    expect(cancelled.result?.['status']).toBe('cancelled');
    await eventually(() => counter.closed >= 1);
    const next = await run(peer, 'echo', { text: 'after' });
    expect(next.result?.['content']).toEqual([{ type: 'text', text: 'after' }]);
    expect(counter.instances - base).toBe(2);
    await peer.close();
  });
});
