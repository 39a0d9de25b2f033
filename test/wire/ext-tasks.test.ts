import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HttpFixture, ModernPeer, eventually, type HttpPeer } from '../helpers/rawWire.js';

const EXT = 'io.modelcontextprotocol/tasks';
const RELATED = 'io.modelcontextprotocol/related-task';

describe('the 2026 tasks extension on the 2026-07-28 wire', () => {
  let fixture: HttpFixture;
  let peer: ModernPeer;

  beforeAll(async () => {
    fixture = await HttpFixture.start();
    peer = new ModernPeer(fixture.url);
  });
  afterAll(async () => fixture.close());

  async function createTask(name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const response = await peer.request('tools/call', { name, arguments: args });
    expect(response.error, JSON.stringify(response.error)).toBeUndefined();
    expect(response.result?.['resultType']).toBe('task');
    return response.result as Record<string, unknown>;
  }

  async function untilStatus(taskId: string, status: string): Promise<Record<string, unknown>> {
    return eventually(async () => {
      const task = (await peer.request('tasks/get', { taskId })).result;
      return task?.['status'] === status ? task : undefined;
    });
  }

  it('advertises the extension in server/discover and no legacy tasks capability (§3.7)', async () => {
    const discover = await peer.request('server/discover');
    const capabilities = discover.result?.['capabilities'] as Record<string, unknown>;
    expect((capabilities['extensions'] as Record<string, unknown>)[EXT]).toEqual({});
    expect(capabilities['tasks']).toBeUndefined();
  });

  it('E1: never creates a task for a request that does not declare the extension itself', async () => {
    const plain = await peer.request(
      'tools/call',
      { name: 'slow_compute', arguments: { seconds: 0, label: 'e1' } },
      { declare: false },
    );
    expect(plain.result?.['resultType']).toBe('complete');
    expect(plain.result?.['content']).toEqual([{ type: 'text', text: 'Computed e1 in 0s' }]);
    expect(plain.result?.['taskId']).toBeUndefined();
  });

  it('E14: a task-only tool refuses a non-declaring client with -32021 naming the capability', async () => {
    const refused = await peer.request('tools/call', { name: 'failing_job', arguments: {} }, { declare: false });
    expect(refused.error?.code).toBe(-32021);
    expect(refused.error?.data).toEqual({ requiredCapabilities: { extensions: { [EXT]: {} } } });
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const response = await peer.request(method, { taskId: 'x', inputResponses: {} }, { declare: false });
      expect(response.error?.code, method).toBe(-32021);
    }
  });

  it('E3 E4: answers a flat CreateTaskResult once the task is durable, ttlMs and pollIntervalMs included', async () => {
    const created = await createTask('slow_compute', { seconds: 1, label: 'e3' });
    expect(created['task']).toBeUndefined();
    expect(created['status']).toBe('working');
    expect(created['ttlMs']).toBeGreaterThan(0);
    expect(created['pollIntervalMs']).toBe(200);
    expect(created['ttl']).toBeUndefined();
    const got = await peer.request('tasks/get', { taskId: created['taskId'] });
    expect(got.result?.['taskId']).toBe(created['taskId']);
    expect(got.result?.['resultType']).toBe('complete');
  });

  it('E8 E15: tasks/get inlines the result of a completed task, without related-task _meta', async () => {
    const created = await createTask('slow_compute', { seconds: 0.2, label: 'inline' });
    const done = await untilStatus(created['taskId'] as string, 'completed');
    expect(done['result']).toEqual({
      content: [{ type: 'text', text: 'Computed inline in 0.2s' }],
      resultType: 'complete',
    });
    expect(JSON.stringify(done)).not.toContain(RELATED);
  });

  it('E15: a tool result with isError ends completed; a JSON-RPC error ends failed with the error inlined', async () => {
    const toolError = await createTask('failing_job');
    const completed = await untilStatus(toolError['taskId'] as string, 'completed');
    expect((completed['result'] as Record<string, unknown>)['isError']).toBe(true);
    const protocolError = await createTask('protocol_error_job');
    const failed = await untilStatus(protocolError['taskId'] as string, 'failed');
    expect(failed['error']).toEqual({
      code: -32603,
      message: 'protocol_error_job: the upstream service refused the request',
      data: { upstream: 'inventory', retryable: false },
    });
    expect(failed['result']).toBeUndefined();
  });

  it('E8 E10 E12: every outstanding request is listed; partial answers keep input_required; unknown and replayed keys are ignored', async () => {
    const created = await createTask('multi_input');
    const taskId = created['taskId'] as string;
    const waiting = await eventually(async () => {
      const task = (await peer.request('tasks/get', { taskId })).result;
      return Object.keys((task?.['inputRequests'] as object) ?? {}).length === 2 ? task : undefined;
    });
    const [first, second] = Object.keys(waiting['inputRequests'] as object) as [string, string];
    expect(first).not.toBe(second);
    const ack = await peer.request('tasks/update', {
      taskId,
      inputResponses: { [first]: { action: 'accept', content: { name: 'Grace' } }, bogus: { action: 'accept' } },
    });
    expect(ack.result).toEqual({ resultType: 'complete' });
    const partial = (await peer.request('tasks/get', { taskId })).result as Record<string, unknown>;
    expect(partial['status']).toBe('input_required');
    expect(Object.keys(partial['inputRequests'] as object)).toEqual([second]);
    // A replayed key is no longer outstanding: acknowledged, ignored.
    expect(
      (await peer.request('tasks/update', { taskId, inputResponses: { [first]: { action: 'decline' } } })).result,
    ).toEqual({ resultType: 'complete' });
    await peer.request('tasks/update', {
      taskId,
      inputResponses: { [second]: { action: 'accept', content: { confirm: true } } },
    });
    const done = await untilStatus(taskId, 'completed');
    expect(done['result']).toEqual({
      content: [{ type: 'text', text: 'name="Grace" confirm=true' }],
      resultType: 'complete',
    });
  });

  it('E5: a multi-round-trip tool asks synchronously before any task exists, then becomes a task', async () => {
    const round1 = await peer.request('tools/call', { name: 'test_tool_with_task', arguments: {} });
    expect(round1.result?.['resultType']).toBe('input_required');
    expect(round1.result?.['taskId']).toBeUndefined();
    const requests = round1.result?.['inputRequests'] as Record<string, { method: string }>;
    expect(Object.keys(requests)).toEqual(['user_name']);
    const round2 = await peer.request('tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
      ...(typeof round1.result?.['requestState'] === 'string' && { requestState: round1.result['requestState'] }),
    });
    expect(round2.result?.['resultType']).toBe('task');
    expect(round2.result?.['requestState']).toBeUndefined();
    const done = await untilStatus(round2.result?.['taskId'] as string, 'completed');
    expect(JSON.stringify(done['result'])).toContain('Hello Ada');
  });

  it('E13: tasks/cancel is an empty acknowledgement, also for a terminal task, and the work stops', async () => {
    const created = await createTask('slow_compute', { seconds: 60, label: 'stop' });
    const taskId = created['taskId'] as string;
    const ack = await peer.request('tasks/cancel', { taskId });
    expect(ack.result).toEqual({ resultType: 'complete' });
    expect((await untilStatus(taskId, 'cancelled'))['status']).toBe('cancelled');
    expect((await peer.request('tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
  });

  it('E14 bad input: unknown ids, wrong types and missing fields get -32602', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      expect(
        (await peer.request(method, { taskId: 'tasks-conformance-nonexistent-12345', inputResponses: {} })).error?.code,
        method,
      ).toBe(-32602);
      expect((await peer.request(method, { taskId: 42, inputResponses: {} })).error?.code, method).toBe(-32602);
      expect((await peer.request(method, { inputResponses: {} })).error?.code, method).toBe(-32602);
    }
    const created = await createTask('confirm_delete', { filename: 'x' });
    for (const inputResponses of [undefined, 'yes', ['a']]) {
      const response = await peer.request('tasks/update', {
        taskId: created['taskId'],
        ...(inputResponses !== undefined && { inputResponses }),
      });
      expect(response.error?.code).toBe(-32602);
    }
    await peer.request('tasks/cancel', { taskId: created['taskId'] });
  });

  it('tasks/result and tasks/list do not exist on this wire (-32601)', async () => {
    expect((await peer.request('tasks/result', { taskId: 'x' })).error?.code).toBe(-32601);
    expect((await peer.request('tasks/list', {})).error?.code).toBe(-32601);
  });

  it('E17: a mismatched Mcp-Name header on tasks/get is -32020', async () => {
    const created = await createTask('slow_compute', { seconds: 0, label: 'h' });
    const response = await peer.request(
      'tasks/get',
      { taskId: created['taskId'] },
      { headers: { 'mcp-name': 'someone-else' } },
    );
    expect(response.error?.code).toBe(-32020);
  });

  it('pushes notifications/tasks for the task ids a client subscribed to through subscriptions/listen', async () => {
    const created = await createTask('slow_compute', { seconds: 0.5, label: 'push' });
    const taskId = created['taskId'] as string;
    const stream = await peer.listen({ taskIds: [taskId, 'not-a-task'] });
    try {
      expect(stream.first?.['method']).toBe('notifications/subscriptions/acknowledged');
      expect((stream.first?.['params'] as { notifications: unknown }).notifications).toEqual({ taskIds: [taskId] });
      const completed = await eventually(() =>
        stream.messages.find((m) => m.method === 'notifications/tasks' && m.params?.['status'] === 'completed'),
      );
      expect(completed.params?.['taskId']).toBe(taskId);
      expect(completed.params?.['result']).toEqual({
        content: [{ type: 'text', text: 'Computed push in 0.5s' }],
        resultType: 'complete',
      });
      // spec E16: no progress on task streams.
      expect(stream.messages.some((m) => m.method === 'notifications/progress')).toBe(false);
    } finally {
      stream.close();
    }
    const refused = await peer.listen({ taskIds: [taskId] }, false);
    expect((refused.first as { error?: { code: number } }).error?.code).toBe(-32021);
    refused.close();
  });

  it('§3.7: tasks created through the 2025-11-25 flow stay reachable by tasks/get and tasks/cancel', async () => {
    const legacy: HttpPeer = await fixture.peer();
    await legacy.initialize();
    const created = await legacy.request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 30, label: 'legacy' },
      task: {},
    });
    const taskId = (created.result?.['task'] as { taskId: string }).taskId;
    const seen = await peer.request('tasks/get', { taskId });
    expect(seen.result?.['status']).toBe('working');
    expect(seen.result?.['ttlMs']).toBeGreaterThan(0);
    expect((await peer.request('tasks/cancel', { taskId })).result).toEqual({ resultType: 'complete' });
    expect((await legacy.request('tasks/get', { taskId })).result?.['status']).toBe('cancelled');
    await legacy.close();
  });
});
