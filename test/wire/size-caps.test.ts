// Size caps on what a task stores, at the wire: too-large arguments are refused with -32602 before anything is
// stored, in every generation; a too-large result fails the task with a clear message instead of being stored.
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, HttpFixture, ModernPeer, StdioPeer, type HttpPeer, type RawPeer } from '../helpers/rawWire.js';

const SEP_TASK = 'modelcontextprotocol.io/task';
const SEP_RELATED = 'modelcontextprotocol.io/related-task';
const MIB = 1024 * 1024;
/** Over the default 1 MiB cap on stored arguments. */
const hugeLabel = 'x'.repeat(MIB + 1024);

function expectArgumentsRefused(response: { error?: { code: number; message: string; data?: unknown } }): void {
  expect(response.error?.code).toBe(-32602);
  expect(response.error?.message).toMatch(
    /^Cannot create task: Arguments too large: \d+ bytes, the limit is 1048576 bytes$/,
  );
  expect(response.error?.data).toEqual({ limit: 'arguments_size', maxBytes: MIB });
}

async function taskCount(peer: RawPeer): Promise<number> {
  const listed = await peer.request('tasks/list', {});
  return (listed.result?.['tasks'] as unknown[]).length;
}

/** An HTTP fixture for the enclosing suite, with a 2025-era session peer and a 2026-07-28 peer. */
function httpFixture(env: Record<string, string> = {}) {
  const state = {} as { fixture: HttpFixture; peer: HttpPeer; modern: ModernPeer };
  beforeAll(async () => {
    state.fixture = await HttpFixture.start({ env });
    state.peer = await state.fixture.peer();
    await state.peer.initialize();
    state.modern = new ModernPeer(state.fixture.url);
  });
  afterAll(async () => {
    await state.peer.close();
    await state.fixture.close();
  });
  return state;
}

describe('size caps with the default limits', () => {
  const http = httpFixture();

  it('2025-11-25: a task-augmented tools/call with arguments over 1 MiB is -32602 and stores no task', async () => {
    const before = await taskCount(http.peer);
    const response = await http.peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: hugeLabel },
      task: {},
    });
    expectArgumentsRefused(response);
    expect(await taskCount(http.peer)).toBe(before);
  });

  it('2025-11-25: arguments well within the cap (half a MiB) make a task as usual', async () => {
    const label = 'y'.repeat(MIB / 2);
    const created = await http.peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label },
      task: {},
    });
    const task = created.result?.['task'] as { taskId: string };
    const result = await http.peer.request('tasks/result', { taskId: task.taskId });
    expect(result.result?.['content']).toEqual([{ type: 'text', text: `Computed ${label} in 0s` }]);
  });

  it('2026 extension: server-directed creation with arguments over 1 MiB is -32602', async () => {
    const response = await http.modern.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: hugeLabel },
    });
    expect(response.httpStatus).toBe(200);
    expectArgumentsRefused(response);
  });

  it('2026 extension: an input answer over 1 MiB is -32602 and the question stays open', async () => {
    const created = await http.modern.request('tools/call', { name: 'multi_input', arguments: {} });
    const taskId = created.result?.['taskId'] as string;
    const waiting = await eventually(async () => {
      const task = (await http.modern.request('tasks/get', { taskId })).result;
      return Object.keys((task?.['inputRequests'] as object) ?? {}).length === 2 ? task : undefined;
    });
    const [first] = Object.keys(waiting['inputRequests'] as object) as [string];
    const refused = await http.modern.request('tasks/update', {
      taskId,
      inputResponses: { [first]: { action: 'accept', content: { name: hugeLabel } } },
    });
    expect(refused.error?.code).toBe(-32602);
    expect(refused.error?.message).toMatch(
      /^Cannot update task: Input answer too large: \d+ bytes, the limit is 1048576 bytes$/,
    );
    expect(refused.error?.data).toEqual({ limit: 'input_size', maxBytes: MIB });
    const task = (await http.modern.request('tasks/get', { taskId })).result;
    expect(task?.['status']).toBe('input_required');
    expect(Object.keys(task?.['inputRequests'] as object)).toContain(first);
    await http.modern.request('tasks/cancel', { taskId });
  });

  it('SEP-1686: a requestor-named task with arguments over 1 MiB is -32602 and the id stays unknown', async () => {
    const taskId = randomUUID();
    const response = await http.peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: hugeLabel },
      _meta: { [SEP_TASK]: { taskId } },
    });
    expectArgumentsRefused(response);
    const got = await http.peer.request('tasks/get', { taskId, _meta: { [SEP_RELATED]: { taskId } } });
    expect(got.error?.code).toBe(-32602);
    expect(got.error?.message).toMatch(/Task not found/);
  });
});

describe('size caps on results (MCP_TASKS_MAX_RESULT_BYTES=4096)', () => {
  const http = httpFixture({ MCP_TASKS_MAX_RESULT_BYTES: '4096' });
  // The tool echoes its label: the result is over the result cap, the arguments far under theirs.
  const label = 'z'.repeat(8000);
  const tooLarge = /^The task's result is too large to store \(\d+ bytes; the limit is 4096 bytes\)$/;

  it('2025-11-25: the task fails, and tasks/result returns the error saying why', async () => {
    const created = await http.peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label },
      task: {},
    });
    const { taskId } = created.result?.['task'] as { taskId: string };
    const result = await http.peer.request('tasks/result', { taskId });
    expect(result.error?.code).toBe(-32603);
    expect(result.error?.message).toMatch(tooLarge);
    const task = (await http.peer.request('tasks/get', { taskId })).result;
    expect(task?.['status']).toBe('failed');
    expect(task?.['statusMessage']).toMatch(tooLarge);
  });

  it('2026 extension: tasks/get shows the task failed with the error', async () => {
    const created = await http.modern.request('tools/call', { name: 'slow_compute', arguments: { seconds: 0, label } });
    const taskId = created.result?.['taskId'] as string;
    let task: Record<string, unknown> | undefined;
    for (let i = 0; i < 200 && task?.['status'] !== 'failed'; i++) {
      task = (await http.modern.request('tasks/get', { taskId })).result;
      if (task?.['status'] !== 'failed') await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(task?.['status']).toBe('failed');
    expect((task?.['error'] as { message: string }).message).toMatch(tooLarge);
  });

  it('SEP-1686: the original request is answered with the error', async () => {
    const taskId = randomUUID();
    const response = await http.peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label },
      _meta: { [SEP_TASK]: { taskId } },
    });
    expect(response.error?.code).toBe(-32603);
    expect(response.error?.message).toMatch(tooLarge);
  });
});

describe('size caps over stdio', () => {
  let peer: StdioPeer;
  beforeAll(async () => {
    peer = await StdioPeer.start();
    await peer.initialize();
  });
  afterAll(async () => peer.close());

  it('2025-11-25: a task-augmented tools/call with arguments over 1 MiB is -32602 and stores no task', async () => {
    const before = await taskCount(peer);
    const response = await peer.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0, label: hugeLabel },
      task: {},
    });
    expectArgumentsRefused(response);
    expect(await taskCount(peer)).toBe(before);
  });
});
