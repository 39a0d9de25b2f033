import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  TaskClient,
  TaskConnectionError,
  TaskFailedError,
  TaskNotSupportedError,
  textOf,
  type InputContext,
  type TaskClientOptions,
} from '../../src/client/index.js';
import { tempDir } from '../helpers/tmp.js';
import { expectSingleFinalWord, observe, sleep } from './helpers/observe.js';
import { WirePeer } from './helpers/WirePeer.js';

/** The extension codec against a peer written from TASKS-SPEC §3, asserting the client's side of the wire. */
const EXT = 'io.modelcontextprotocol/tasks';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';

function declares(params: Record<string, unknown> | undefined): boolean {
  const meta = params?.['_meta'] as Record<string, { extensions?: Record<string, unknown> }> | undefined;
  return meta?.[CAPS]?.extensions?.[EXT] !== undefined;
}

describe('2026 extension (io.modelcontextprotocol/tasks) against the wire peer', () => {
  let peer: WirePeer;
  let client: TaskClient | undefined;

  const connect = async (options: TaskClientOptions = {}) => {
    client = await TaskClient.connect({ url: peer.url }, options);
    return client;
  };

  beforeEach(async () => {
    peer = await WirePeer.start('ext-2026');
  });

  afterEach(async () => {
    await client?.close();
    client = undefined;
    await peer.close();
    expect(peer.violations).toEqual([]);
  });

  it('finds the extension through server/discover on the 2026-07-28 wire', async () => {
    const tasks = await connect();
    expect(tasks.protocolEra).toBe('modern');
    expect(tasks.dialect).toBe('ext-2026');
    expect(peer.requests('server/discover')).toHaveLength(1);
    expect(peer.requests('initialize')).toHaveLength(0);
  });

  it('declares the extension per request, takes resultType "task", and polls tasks/get with Mcp-Name', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('sleepy', { ms: 400, text: 'done sleeping' });
    expect(handle.isTask).toBe(true);
    const seen = observe(handle);
    expect(textOf(await handle.result())).toBe('done sleeping');
    expect(expectSingleFinalWord(seen)).toBe('completed');

    const [call] = peer.requests('tools/call');
    expect(declares(call?.params)).toBe(true);
    expect(call?.headers['mcp-name']).toBe('sleepy');
    const gets = peer.requests('tasks/get');
    expect(gets.length).toBeGreaterThanOrEqual(2);
    for (const get of gets) {
      expect(get.params).toMatchObject({ taskId: handle.taskId });
      expect(get.headers).toMatchObject({
        'mcp-method': 'tasks/get',
        'mcp-name': handle.taskId,
        'mcp-protocol-version': '2026-07-28',
      });
      expect(declares(get.params)).toBe(true);
    }
    // pollIntervalMs is 50: about 8 polls in 400 ms; generous bounds either side (spec E6).
    expect(gets.length).toBeLessThan(40);
  });

  it('answers inputRequests once per key through the host handler and tasks/update', async () => {
    const asked: InputContext[] = [];
    const tasks = await connect({
      elicitation: async (params, context) => {
        asked.push(context);
        expect(params.message).toBe('What is your name?');
        await sleep(120);
        return { action: 'accept', content: { name: 'Ada' } };
      },
    });
    const handle = await tasks.callTool('ask');
    const seen = observe(handle);
    expect(textOf(await handle.result())).toBe('hello Ada');
    expect(seen.map((snapshot) => snapshot.status)).toContain('input_required');
    // The peer keeps listing the answered key for a few polls; it is not asked again (spec E11).
    expect(asked).toEqual([expect.objectContaining({ taskId: handle.taskId, key: 'q1', dialect: 'ext-2026' })]);
    const updates = peer.requests('tasks/update');
    expect(updates).toHaveLength(1);
    expect(updates[0]?.params).toMatchObject({
      taskId: handle.taskId,
      inputResponses: { q1: { action: 'accept', content: { name: 'Ada' } } },
    });
    expect(updates[0]?.headers['mcp-name']).toBe(handle.taskId);
  });

  it('answers several outstanding input requests', async () => {
    const tasks = await connect({
      elicitation: (params) => ({
        action: 'accept',
        content: params.message === 'Name?' ? { name: 'Grace' } : ({ color: 'green' } as Record<string, string>),
      }),
    });
    const handle = await tasks.callTool('ask_two');
    expect(textOf(await handle.result())).toBe('Grace likes green');
    const keys = peer
      .requests('tasks/update')
      .map((update) => Object.keys(update.params?.['inputResponses'] as object));
    expect(keys.flat().sort()).toEqual(['color', 'name']);
  });

  it('carries synchronous input rounds (input_required + requestState) before the task is made', async () => {
    const tasks = await connect({ elicitation: () => ({ action: 'accept', content: { ok: true } }) });
    const handle = await tasks.callTool('mrtr');
    expect(textOf(await handle.result())).toBe('confirmed {"ok":true}');
    const calls = peer.requests('tools/call');
    expect(calls).toHaveLength(2);
    expect(calls[1]?.params).toMatchObject({
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
      requestState: 'opaque-state-7',
    });
  });

  it("reports a failed task with the server's JSON-RPC error", async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('fail_rpc');
    const outcome = await handle.outcome();
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: 'upstream refused', data: { retryable: false } },
    });
    const failure = await handle.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TaskFailedError);
    expect((failure as TaskFailedError).error?.code).toBe(-32603);
  });

  it('reports a completed task with an isError result as a failure carrying that result', async () => {
    const tasks = await connect();
    const outcome = await (await tasks.callTool('fail_tool')).outcome();
    expect(outcome.status).toBe('failed');
    // The server's own word stays visible: the extension completes such tasks (spec E15).
    expect(outcome.snapshot.status).toBe('completed');
    expect(outcome.status === 'failed' && outcome.result?.isError).toBe(true);
    expect(outcome.status === 'failed' && outcome.message).toBe('the input data is corrupt');
  });

  it('cancels with tasks/cancel and settles on tasks/get', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('cancellable', { ms: 5000 });
    const seen = observe(handle);
    await sleep(150);
    const outcome = await handle.cancel();
    expect(outcome.status).toBe('cancelled');
    expect(handle.cancelAcknowledgement).toEqual({ kind: 'accepted' });
    expect(expectSingleFinalWord(seen)).toBe('cancelled');
    expect(seen.some((snapshot) => snapshot.cancelRequested === true && snapshot.status === 'working')).toBe(true);
    expect(peer.requests('tasks/cancel')).toHaveLength(1);
    expect(peer.requests('tasks/cancel')[0]?.headers['mcp-name']).toBe(handle.taskId);
  });

  it('shows the final word when the work wins the race against the cancel', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('race', { ms: 5000 });
    const seen = observe(handle);
    const outcome = await handle.cancel();
    expect(outcome.status).toBe('completed');
    expect(expectSingleFinalWord(seen)).toBe('completed');
    expect(seen.filter((snapshot) => snapshot.status === 'cancelled')).toHaveLength(0);
  });

  it('keeps polling when the server does not act on the cancel (cooperative cancel)', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('stubborn', { ms: 500 });
    const outcome = await handle.cancel();
    expect(outcome.status).toBe('completed');
    expect(textOf((outcome as { result: Parameters<typeof textOf>[0] }).result)).toBe('stubborn finished');
  });

  it('does not declare the extension on a plain call', async () => {
    const tasks = await connect();
    const plain = await tasks.callTool('sleepy', {}, { mode: 'plain' });
    expect(plain.isTask).toBe(false);
    expect(textOf(await plain.result())).toBe('plain sleepy');
    expect(declares(peer.requests('tools/call')[0]?.params)).toBe(false);
    // A tool the server only runs as a task refuses a non-declaring request with -32021.
    const refused = await tasks.callTool('task_only', {}, { mode: 'plain' });
    await expect(refused.outcome()).rejects.toBeInstanceOf(TaskNotSupportedError);
  });

  it('accepts an ordinary result to a declaring request (the server decides)', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('instant');
    expect(handle.isTask).toBe(false);
    expect(textOf(await handle.result())).toBe('answered at once');
  });

  it('lists known handles from the store, having no tasks/list', async () => {
    const store = join(tempDir(), 'handles.json');
    const tasks = await connect({ store });
    const handle = await tasks.callTool('cancellable', { ms: 5000 });
    const list = await tasks.listTasks();
    expect(list.source).toBe('store');
    expect(list.tasks.map((task) => task.taskId)).toEqual([handle.taskId]);
    await handle.cancel();
  });

  it('resumes a stored task from a new client', async () => {
    const store = join(tempDir(), 'handles.json');
    const first = await TaskClient.connect({ url: peer.url }, { store });
    const handle = await first.callTool('sleepy', { ms: 600, text: 'resumed' });
    await first.close();
    // Closing cancels nothing: the follower learns it lost the connection, and the task stays stored.
    await expect(handle.outcome()).rejects.toBeInstanceOf(TaskConnectionError);
    const second = await connect({ store });
    const [resumed] = await second.resume();
    expect(resumed?.taskId).toBe(handle.taskId);
    expect(textOf(await resumed!.result())).toBe('resumed');
  });
});

describe('2026 wire without the extension', () => {
  it('refuses task mode and runs calls plainly, undeclared', async () => {
    const peer = await WirePeer.start('ext-2026', { advertise: false });
    const tasks = await TaskClient.connect({ url: peer.url });
    try {
      expect(tasks.dialect).toBe('none');
      await expect(tasks.callTool('sleepy', {}, { mode: 'task' })).rejects.toBeInstanceOf(TaskNotSupportedError);
      const handle = await tasks.callTool('sleepy');
      expect(textOf(await handle.result())).toBe('plain sleepy');
      expect(declares(peer.requests('tools/call')[0]?.params)).toBe(false);
    } finally {
      await tasks.close();
      await peer.close();
    }
    expect(peer.violations).toEqual([]);
  });
});
