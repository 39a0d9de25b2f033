import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { TaskClient, textOf, type InputContext, type TaskClientOptions } from '../../src/client/index.js';
import { expectSingleFinalWord, observe, sleep } from './helpers/observe.js';
import { WirePeer } from './helpers/WirePeer.js';

/** The SEP-1686 codec against a peer written from the proposal (TASKS-SPEC §2, seed 1). */
const SEP_TASK = 'modelcontextprotocol.io/task';

function taskMeta(params: Record<string, unknown> | undefined): { taskId?: string; keepAlive?: number } | undefined {
  return (params?.['_meta'] as Record<string, { taskId?: string; keepAlive?: number }> | undefined)?.[SEP_TASK];
}

describe('SEP-1686 against the wire peer', () => {
  let peer: WirePeer;
  let client: TaskClient | undefined;

  const connect = async (options: TaskClientOptions = {}) => {
    client = await TaskClient.connect({ url: peer.url }, { dialect: 'sep-1686', ...options });
    return client;
  };

  beforeEach(async () => {
    peer = await WirePeer.start('sep-1686');
  });

  afterEach(async () => {
    await client?.close();
    client = undefined;
    await peer.close();
    expect(peer.violations).toEqual([]);
  });

  it('names the task itself, takes notifications/tasks/created, polls, and still gets the original response', async () => {
    const tasks = await connect({ ttlMs: 45_000 });
    expect(tasks.dialect).toBe('sep-1686');
    const handle = await tasks.callTool('sleepy', { ms: 400, text: 'proposal era' });
    // The id exists before the server says anything (client-generated, SEP-1686 §3.1).
    expect(handle.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(handle.status).toBe('submitted');
    const seen = observe(handle);
    expect(await handle.accepted()).toBe(true);
    expect(textOf(await handle.result())).toBe('proposal era');
    expect(expectSingleFinalWord(seen)).toBe('completed');

    const [call] = peer.requests('tools/call');
    expect(taskMeta(call?.params)).toEqual({ taskId: handle.taskId, keepAlive: 45_000 });
    expect(peer.requests('tasks/get').length).toBeGreaterThanOrEqual(1);
    // The keepAlive and pollFrequency the server reports are what the handle works with.
    expect(seen.some((snapshot) => snapshot.ttlMs === 30_000 && snapshot.pollIntervalMs === 50)).toBe(true);
  });

  it('falls back to the original response when the server ignores the task metadata', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('plain');
    expect(textOf(await handle.result())).toBe('plain plain');
    expect(await handle.accepted()).toBe(false);
    expect(handle.isTask).toBe(false);
    expect(peer.requests('tasks/get')).toHaveLength(0);
  });

  it('hands server requests made during the task to the elicitation handler', async () => {
    const asked: InputContext[] = [];
    const tasks = await connect({
      elicitation: (_params, context) => {
        asked.push(context);
        return { action: 'accept', content: { name: 'Lin' } };
      },
    });
    const handle = await tasks.callTool('ask');
    expect(textOf(await handle.result())).toBe('hello Lin');
    // The request named the task with SEP-1686's related-task key.
    expect(asked).toEqual([expect.objectContaining({ taskId: handle.taskId, dialect: 'sep-1686' })]);
  });

  it('cancels through notifications/cancelled for the original request id, confirmed by tasks/get', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('cancellable', { ms: 5000 });
    const seen = observe(handle);
    expect(await handle.accepted()).toBe(true);
    const outcome = await handle.cancel();
    expect(outcome.status).toBe('cancelled');
    expect(expectSingleFinalWord(seen)).toBe('cancelled');
    const [call] = peer.requests('tools/call');
    const cancelled = peer.received.filter((message) => message.method === 'notifications/cancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]?.params?.['requestId']).toBe(call?.id);
    expect(peer.requests('tasks/cancel')).toHaveLength(0);
    expect(peer.tasks.get(handle.taskId as string)?.status).toBe('cancelled');
  });

  it('reports a failed task with the error of the original response', async () => {
    const tasks = await connect();
    const outcome = await (await tasks.callTool('fail_rpc')).outcome();
    expect(outcome).toMatchObject({ status: 'failed', message: 'upstream refused' });
  });

  it('treats an isError result as a failure carrying the tool result', async () => {
    const tasks = await connect();
    const outcome = await (await tasks.callTool('fail_tool')).outcome();
    expect(outcome.status).toBe('failed');
    expect(outcome.status === 'failed' && textOf(outcome.result ?? { content: [] })).toBe('the input data is corrupt');
  });

  it('re-sends the original request with the same task id after a dropped connection, then polls', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('drop_first');
    expect(textOf(await handle.result())).toBe('survived a dropped connection');
    const calls = peer.requests('tools/call');
    expect(calls).toHaveLength(2);
    expect(taskMeta(calls[1]?.params)?.taskId).toBe(handle.taskId);
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
    // The second answer was -32602 "Task ID already exists": the task was polled, and its result fetched.
    expect(peer.requests('tasks/result')).toHaveLength(1);
  });

  it('lists tasks and deletes one', async () => {
    const tasks = await connect();
    const handle = await tasks.callTool('sleepy', { ms: 100 });
    await handle.result();
    const list = await tasks.listTasks();
    expect(list.source).toBe('server');
    expect(list.tasks).toContainEqual(expect.objectContaining({ taskId: handle.taskId, status: 'completed' }));
    await tasks.deleteTask(handle.taskId as string);
    expect(peer.requests('tasks/delete')).toHaveLength(1);
    expect(peer.tasks.has(handle.taskId as string)).toBe(false);
    await sleep(10);
  });
});
