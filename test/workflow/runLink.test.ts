import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { TaskEngine } from '../../src/engine/index.js';
import { InProcessExecutor } from '../../src/executors/in-process/index.js';
import { runInternalCall } from '../../src/server/work/LegacyInternalCall.js';
import { createTaskWork } from '../../src/server/work/createTaskWork.js';
import { MemoryStore } from '../../src/stores/memory/index.js';
import { journaledWork, withSteps } from '../../src/workflow/index.js';

/** What each call of the tool saw: the task its steps journal to, and the `_meta` keys of its request. */
type Seen = { taskId: string | undefined; metaKeys: string[] };

function workflowServer(seen: Seen[]) {
  return () => {
    const server = new McpServer({ name: 'wf', version: '1.0.0' });
    server.registerTool(
      'wf',
      { inputSchema: z.object({ wait: z.number() }) },
      withSteps<{ wait: number }>(async ({ wait }, step, ctx) => {
        const id = await step.do('id', async () => {
          // Overlaps the other runs: each must still find its own.
          await new Promise((resolve) => setTimeout(resolve, wait));
          return step.taskId ?? 'none';
        });
        seen.push({ taskId: step.taskId, metaKeys: Object.keys(ctx.mcpReq._meta ?? {}) });
        return { content: [{ type: 'text', text: id }] };
      }),
    );
    return server;
  };
}

describe('a tool finds the run of the task that called it', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('through the internal call, each of several runs at once its own, with nothing added to the request', async () => {
    const seen: Seen[] = [];
    const engine = new TaskEngine({ store: new MemoryStore(), sweepIntervalMs: 0, recoveryIntervalMs: 0 });
    const executor = new InProcessExecutor({
      engine,
      work: journaledWork(engine, createTaskWork(workflowServer(seen))),
    });
    engine.setExecutor(executor);
    await engine.start();
    cleanups.push(async () => {
      await executor.close();
      await engine.close();
    });
    const ids = await Promise.all(
      [80, 40, 10, 60].map(async (wait) => {
        const request = { method: 'tools/call', params: { name: 'wf', arguments: { wait } } };
        return (await engine.create({ owner: 'o', request, dialect: 't' })).task.taskId;
      }),
    );
    for (const taskId of ids) {
      const done = await engine.waitForTerminal(taskId);
      expect(done?.outcome).toEqual({ kind: 'result', result: { content: [{ type: 'text', text: taskId }] } });
    }
    expect(seen.map((call) => call.taskId).sort()).toEqual([...ids].sort());
    // The request the tool gets is the task's own (with the runtime's progress token): no run token in it.
    for (const call of seen) expect(call.metaKeys).toEqual(['progressToken']);
  });

  it('a call outside any task run gets the steps of the request alone', async () => {
    const seen: Seen[] = [];
    const outcome = await runInternalCall(
      workflowServer(seen),
      { method: 'tools/call', params: { name: 'wf', arguments: { wait: 1 } } },
      {
        signal: new AbortController().signal,
        clientCapabilities: {},
        requestInput: () => Promise.reject(new Error('no')),
      },
    );
    expect(outcome).toEqual({ kind: 'result', result: { content: [{ type: 'text', text: 'none' }] } });
    expect(seen).toEqual([{ taskId: undefined, metaKeys: [] }]);
  });
});
