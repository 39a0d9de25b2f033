import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { tempDir } from '../helpers/tmp.js';
import { COLLECT_GARBAGE, EVERYTHING_STDIO, startProxyProcess, type ProxyProcess } from './helpers/proxyProcess.js';

/**
 * A host that does not speak tasks (the SDK 1.32 client declaring no tasks capability) in front of the gateway and
 * server-everything: long plain calls turn into tasks it follows with the task_* tools.
 */

type ToolResult = {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

const dir = tempDir('mcp-tasks-gateway-fallback-');
let proxy: ProxyProcess;
const clients: Client[] = [];

async function host(elicitation?: (message: string) => Record<string, unknown>, url = proxy.url): Promise<Client> {
  const client = new Client(
    { name: 'task-unaware-host', version: '1.0.0' },
    { capabilities: elicitation ? { elicitation: {} } : {} },
  );
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => ({
      action: 'accept',
      content: elicitation(String(request.params.message)) as never,
    }));
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  // Hosts list the tools first; that also opens this caller's own upstream connection (the gateway keeps one per
  // caller), so the calls the tests time against fallbackAfterMs do not include an upstream's start.
  await client.listTools();
  return client;
}

/** A tool call; `timeoutMs` (the SDK's own default is 60 s) makes a call that hangs fail by name. */
const call = async (client: Client, name: string, args: Record<string, unknown> = {}, timeoutMs?: number) =>
  (await client.callTool(
    { name, arguments: args },
    undefined,
    timeoutMs === undefined ? undefined : { timeout: timeoutMs },
  )) as ToolResult;

beforeAll(async () => {
  const config = join(dir, 'proxy.json');
  // 1.5 s: a quick call on a caller's new upstream connection (a server process of its own, the first calls of which
  // run cold) is answered directly even on a loaded machine.
  writeFileSync(config, JSON.stringify({ fallbackAfterMs: 1500, bindToSession: true }));
  proxy = await startProxyProcess(['--store', 'memory', '--config', config, '--', ...EVERYTHING_STDIO]);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await proxy?.stop();
});

describe('fallback tools for a host without tasks', () => {
  it('lists the task_* tools, task_answer only where it cannot be asked', async () => {
    const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
    const plain = await names(await host());
    expect(plain).toEqual(expect.arrayContaining(['echo', 'task_status', 'task_result', 'task_cancel', 'task_list']));
    expect(plain).toContain('task_answer');
    expect(await names(await host(() => ({})))).not.toContain('task_answer');
  });

  it('answers a quick call directly, and a long one with the task to follow, then its own result', async () => {
    const client = await host();
    expect((await call(client, 'get-sum', { a: 2, b: 40 })).content[0]?.text).toContain('42');

    const started = await call(client, 'trigger-long-running-operation', { duration: 4, steps: 4 });
    const { taskId, status, pollAfterMs } = started.structuredContent as Record<string, unknown>;
    expect(status).toBe('working');
    expect(pollAfterMs).toEqual(expect.any(Number));
    expect(started.content[0]?.text).toContain(`task ${taskId as string}`);
    expect(started.content[0]?.text).toContain('task_result');

    const early = await call(client, 'task_result', { taskId });
    expect(early.structuredContent).toMatchObject({ taskId, status: 'working', pollAfterMs: expect.any(Number) });
    const done = await call(client, 'task_result', { taskId, waitMs: 20_000 });
    expect(done.content[0]?.text).toContain('Long running operation completed');
    expect(done.isError).toBeFalsy();
    expect((await call(client, 'task_status', { taskId })).structuredContent).toMatchObject({ status: 'completed' });

    const listed = await call(client, 'task_list');
    const tasks = (listed.structuredContent as { tasks: Array<{ taskId: string }> }).tasks;
    expect(tasks.map((task) => task.taskId)).toContain(taskId);
  });

  it('cancels a task with task_cancel, and the cancel reaches its status', async () => {
    const client = await host();
    const started = await call(client, 'trigger-long-running-operation', { duration: 30, steps: 30 });
    const { taskId } = started.structuredContent as { taskId: string };
    const cancelled = await call(client, 'task_cancel', { taskId });
    expect(cancelled.structuredContent).toMatchObject({ taskId, status: 'cancelled' });
    expect((await call(client, 'task_status', { taskId })).structuredContent).toMatchObject({ status: 'cancelled' });
  });

  it("shows a task's question in task_status and takes the answer with task_answer", async () => {
    // Each step has a budget far above what it takes (the upstream asks 2 s into its task and finishes 2 s after the
    // answer), and all of them fit in the test's 60 s: a step that hangs fails by name instead of timing the test out.
    const client = await host();
    // The call answers with its task once fallbackAfterMs (1.5 s) has passed, long before the task asks.
    const started = await call(client, 'simulate-research-query', { topic: 'mercury', ambiguous: true }, 5_000);
    const { taskId } = started.structuredContent as { taskId: string };
    let status: ToolResult;
    const deadline = Date.now() + 15_000;
    for (;;) {
      status = await call(client, 'task_status', { taskId }, 5_000);
      const seen = (status.structuredContent as { status: string }).status;
      if (seen === 'input_required') break;
      // A task that ended, or never asked, says why instead of leaving the test to time out.
      if (seen !== 'working' || Date.now() > deadline) throw new Error(JSON.stringify(status.structuredContent));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status.structuredContent).toMatchObject({ question: { message: expect.stringContaining('mercury') } });
    expect(status.content[0]?.text).toContain('task_answer');
    await call(client, 'task_answer', { taskId, answer: 'the planet' }, 5_000);
    const done = await call(client, 'task_result', { taskId, waitMs: 15_000 }, 20_000);
    expect(done.content[0]?.text).toContain('Research Report: mercury (the planet)');
  });

  it('asks by elicitation where the host supports it', async () => {
    const client = await host(() => ({ name: 'Grace Hopper', check: true }));
    const result = await call(client, 'trigger-elicitation-request');
    expect(result.content.map((block) => block.text).join('\n')).toContain('Grace Hopper');
  });

  it("another host's task is a task that does not exist", async () => {
    const owner = await host();
    const started = await call(owner, 'trigger-long-running-operation', { duration: 20, steps: 20 });
    const { taskId } = started.structuredContent as { taskId: string };
    const stranger = await host();
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: { code?: number; message: string }) => ({ code: error.code, message: error.message }),
      );
    const theirs = await refusal(call(stranger, 'task_status', { taskId }));
    const missing = await refusal(call(stranger, 'task_status', { taskId: 'no-such-task' }));
    expect(theirs?.code).toBe(-32602);
    expect(theirs?.message.replace(taskId, 'ID')).toBe(missing?.message.replace('no-such-task', 'ID'));
    expect(await refusal(call(stranger, 'task_cancel', { taskId }))).toMatchObject({ code: -32602 });
    await call(owner, 'task_cancel', { taskId });
  });
});

describe('fallback tools in a gateway that collects garbage all the time', () => {
  let collecting: ProxyProcess;

  beforeAll(async () => {
    const config = join(dir, 'collecting.json');
    writeFileSync(config, JSON.stringify({ fallbackAfterMs: 400, bindToSession: true }));
    collecting = await startProxyProcess(['--store', 'memory', '--config', config, '--', ...EVERYTHING_STDIO], {
      NODE_OPTIONS: `--import ${COLLECT_GARBAGE}`,
    });
  });

  afterAll(async () => {
    await collecting?.stop();
  });

  // The wait of a plain call is bounded by a timer that a collection must not take away (nodejs/node#57736): else the
  // call waits for the task to end, and one that asks a question only task_answer can answer never does.
  it('a long call still answers with its task after fallbackAfterMs', async () => {
    const client = await host(undefined, collecting.url);
    const since = Date.now();
    const started = await call(client, 'trigger-long-running-operation', { duration: 10, steps: 10 }, 15_000);
    expect(Date.now() - since, 'the call waited for its task to end, not fallbackAfterMs').toBeLessThan(5_000);
    expect(started.structuredContent).toMatchObject({ status: 'working' });
    const { taskId } = started.structuredContent as { taskId: string };
    await call(client, 'task_cancel', { taskId });
  });
});
