import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, startPeer, type Message, type RawPeer, type Response } from '../helpers/rawWire.js';

const RELATED = 'io.modelcontextprotocol/related-task';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const MAX_TTL = 3_600_000;

type WireTask = {
  taskId: string;
  status: string;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
};

async function createTask(
  peer: RawPeer,
  name: string,
  args: Record<string, unknown> = {},
  task: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
): Promise<WireTask> {
  const response = await peer.request('tools/call', { name, arguments: args, task, ...(meta && { _meta: meta }) });
  expect(response.error, JSON.stringify(response.error)).toBeUndefined();
  return (response.result as { task: WireTask }).task;
}

async function getTask(peer: RawPeer, taskId: string): Promise<WireTask> {
  let response = await peer.request('tasks/get', { taskId });
  // Polling one task faster than its pollInterval is refused with the time to wait; the tight loops here wait as told.
  for (let wait = retryAfterMsOf(response); wait !== undefined; wait = retryAfterMsOf(response)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    response = await peer.request('tasks/get', { taskId });
  }
  expect(response.error, JSON.stringify(response.error)).toBeUndefined();
  return response.result as unknown as WireTask;
}

function retryAfterMsOf(response: Response): number | undefined {
  const wait = (response.error?.data as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof wait === 'number' ? wait : undefined;
}

async function untilStatus(peer: RawPeer, taskId: string, status: string): Promise<WireTask> {
  return eventually(async () => {
    const task = await getTask(peer, taskId);
    return task.status === status ? task : undefined;
  });
}

function expectTaskShape(task: WireTask): void {
  expect(typeof task.taskId).toBe('string');
  expect(task.createdAt).toMatch(ISO);
  expect(task.lastUpdatedAt).toMatch(ISO);
  expect('ttl' in task).toBe(true);
}

for (const kind of ['stdio', 'http'] as const) {
  describe(`2025-11-25 tasks on the raw wire (${kind})`, () => {
    let peer: RawPeer;
    let close: () => Promise<void>;
    let init: Response;

    beforeAll(async () => {
      ({ peer, close } = await startPeer(kind, {
        env: { MCP_TASKS_MAX_TTL_MS: String(MAX_TTL), MCP_TASKS_LIST_PAGE_SIZE: '5' },
      }));
      init = await peer.initialize();
      if (kind === 'http')
        await (peer as unknown as { openNotificationStream(): Promise<void> }).openNotificationStream();
    });
    afterAll(async () => close());

    it('R1: declares capabilities.tasks with list, cancel and requests.tools.call', () => {
      expect(init.result?.['protocolVersion']).toBe('2025-11-25');
      expect((init.result?.['capabilities'] as Record<string, unknown>)['tasks']).toEqual({
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
    });

    it('§1.3: tools/list carries execution.taskSupport per tool, absent meaning forbidden', async () => {
      const tools = (await peer.request('tools/list')).result?.['tools'] as Array<{
        name: string;
        execution?: { taskSupport: string };
      }>;
      const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
      expect(support['greet']).toBeUndefined();
      expect(support['slow_compute']).toBe('optional');
      expect(support['failing_job']).toBe('required');
      expect(support['test_tool_with_task']).toBe('required');
    });

    it('R5: a task-augmented call to a forbidden tool gets -32601', async () => {
      const response = await peer.request('tools/call', { name: 'greet', arguments: { name: 'x' }, task: {} });
      expect(response.error?.code).toBe(-32601);
    });

    it('R7: a plain call to a required tool gets -32601, not a tool result', async () => {
      const response = await peer.request('tools/call', { name: 'failing_job', arguments: {} });
      expect(response.result).toBeUndefined();
      expect(response.error?.code).toBe(-32601);
      expect(response.error?.message).toMatch(/Task augmentation required/);
    });

    it('optional tools still run synchronously without a task', async () => {
      const response = await peer.request('tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 0, label: 'sync' },
      });
      expect(response.result?.['content']).toEqual([{ type: 'text', text: 'Computed sync in 0s' }]);
      expect(response.result?.['task']).toBeUndefined();
    });

    it('R11 R12 R13 R14 R15 R65: answers CreateTaskResult at once with a fresh, unguessable string id, status working', async () => {
      const started = Date.now();
      const tasks = await Promise.all(
        [1, 2, 3].map(() => createTask(peer, 'slow_compute', { seconds: 2, label: 'a' })),
      );
      expect(Date.now() - started).toBeLessThan(1500);
      for (const task of tasks) {
        expectTaskShape(task);
        expect(task.status).toBe('working');
        expect(task.taskId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      }
      expect(new Set(tasks.map((t) => t.taskId)).size).toBe(3);
      for (const task of tasks) await peer.request('tasks/cancel', { taskId: task.taskId });
    });

    it('R27 R28 R30 R32: every task response has ISO timestamps, the actual ttl and a pollInterval', async () => {
      const task = await createTask(peer, 'slow_compute', { seconds: 0.2, label: 'b' }, { ttl: 60_000 });
      expect(task.ttl).toBe(60_000);
      expect(task.pollInterval).toBe(200);
      const got = await getTask(peer, task.taskId);
      expectTaskShape(got);
      expect(got.ttl).toBe(60_000);
      const done = await untilStatus(peer, task.taskId, 'completed');
      expectTaskShape(done);
      expect(Date.parse(done.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(done.createdAt));
    });

    it('R29 R30 R71: a ttl above the maximum is clamped and the actual value reported; none gets the default', async () => {
      const big = await createTask(peer, 'slow_compute', { seconds: 0, label: 'c' }, { ttl: 10 ** 12 });
      expect(big.ttl).toBe(MAX_TTL);
      const unlimited = await createTask(peer, 'slow_compute', { seconds: 0, label: 'c' }, { ttl: null });
      expect(unlimited.ttl).toBe(MAX_TTL);
      const none = await createTask(peer, 'slow_compute', { seconds: 0, label: 'c' });
      expect(none.ttl).toBe(MAX_TTL);
      expect((await getTask(peer, big.taskId)).ttl).toBe(MAX_TTL);
    });

    it('R31 R57: an expired task is -32602 on get, result and cancel', async () => {
      const task = await createTask(peer, 'slow_compute', { seconds: 0, label: 'd' }, { ttl: 1000 });
      expect(task.ttl).toBe(1000);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const response = await peer.request(method, { taskId: task.taskId });
        expect(response.error?.code, method).toBe(-32602);
        expect(response.error?.message).toMatch(/expired/);
      }
    });

    it('R57 R60: unknown ids and malformed params are -32602 with an informative message', async () => {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const unknown = await peer.request(method, { taskId: 'no-such-task' });
        expect(unknown.error?.code).toBe(-32602);
        expect(unknown.error?.message).toMatch(/Task not found/);
        for (const params of [{}, { taskId: 42 }, { taskId: '' }]) {
          expect((await peer.request(method, params)).error?.code).toBe(-32602);
        }
      }
      expect(
        (await peer.request('tools/call', { name: 'slow_compute', arguments: {}, task: 'soon' })).error?.code,
      ).toBe(-32602);
      expect(
        (await peer.request('tools/call', { name: 'slow_compute', arguments: {}, task: { ttl: -5 } })).error?.code,
      ).toBe(-32602);
    });

    it('R33 R35 R36: tasks/result returns exactly the tool result with the related-task _meta', async () => {
      const task = await createTask(peer, 'slow_compute', { seconds: 0.1, label: 'exact' });
      const response = await peer.request('tasks/result', { taskId: task.taskId });
      expect(response.result).toEqual({
        content: [{ type: 'text', text: 'Computed exact in 0.1s' }],
        _meta: { [RELATED]: { taskId: task.taskId } },
      });
      // Callable again while retained.
      expect((await peer.request('tasks/result', { taskId: task.taskId })).result).toEqual(response.result);
    });

    it('R33 R35: tasks/result returns the same JSON-RPC error the request failed with', async () => {
      const task = await createTask(peer, 'protocol_error_job');
      const response = await peer.request('tasks/result', { taskId: task.taskId });
      expect(response.error).toEqual({
        code: -32603,
        message: 'protocol_error_job: the upstream service refused the request',
        data: { upstream: 'inventory', retryable: false },
      });
      const failed = await getTask(peer, task.taskId);
      expect(failed.status).toBe('failed');
      // spec R61: the failure is explained.
      expect(failed.statusMessage).toMatch(/upstream service refused/);
    });

    it('R34: tasks/result holds the response until the task is terminal', async () => {
      const task = await createTask(peer, 'slow_compute', { seconds: 1, label: 'block' });
      const asked = Date.now();
      const response = await peer.request('tasks/result', { taskId: task.taskId });
      expect(Date.now() - asked).toBeGreaterThan(700);
      expect(response.result?.['content']).toEqual([{ type: 'text', text: 'Computed block in 1s' }]);
      expect((await getTask(peer, task.taskId)).status).toBe('completed');
    });

    it('R62 R61: a tool result with isError ends failed, explained, and tasks/result still returns it as-is', async () => {
      const task = await createTask(peer, 'failing_job');
      const response = await peer.request('tasks/result', { taskId: task.taskId });
      expect(response.result?.['isError']).toBe(true);
      expect(response.result?.['content']).toEqual([
        { type: 'text', text: 'The job failed: the input data is corrupt.' },
      ]);
      const failed = await getTask(peer, task.taskId);
      expect(failed.status).toBe('failed');
      expect(failed.statusMessage).toMatch(/input data is corrupt/);
    });

    it('R23 R24 R26 R37 R38: input goes through tasks/result with the related-task _meta and the task resumes', async () => {
      const asked: Message[] = [];
      peer.onServerRequest = (request) => {
        asked.push(request);
        return { action: 'accept', content: { confirm: true } };
      };
      try {
        const task = await createTask(peer, 'confirm_delete', { filename: 'report.pdf' });
        const waiting = await untilStatus(peer, task.taskId, 'input_required');
        expectTaskShape(waiting);
        const result = await peer.request('tasks/result', { taskId: task.taskId });
        expect(asked).toHaveLength(1);
        expect(asked[0]?.method).toBe('elicitation/create');
        expect((asked[0]?.params?.['_meta'] as Record<string, unknown>)[RELATED]).toEqual({ taskId: task.taskId });
        expect(asked[0]?.params?.['message']).toBe('Delete report.pdf?');
        expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Deleted report.pdf' }]);
        expect((await getTask(peer, task.taskId)).status).toBe('completed');
      } finally {
        peer.onServerRequest = undefined;
      }
    });

    it('R26: with several requests outstanding the task stays input_required until all are answered', async () => {
      const answers: Array<() => void> = [];
      peer.onServerRequest = (request) =>
        new Promise((resolve) => {
          const content = request.params?.['message'] === 'Your name?' ? { name: 'Ada' } : { confirm: true };
          answers.push(() => resolve({ action: 'accept', content }));
        });
      try {
        const task = await createTask(peer, 'multi_input');
        await untilStatus(peer, task.taskId, 'input_required');
        const result = peer.request('tasks/result', { taskId: task.taskId });
        await eventually(() => answers.length === 2);
        answers[0]?.();
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await getTask(peer, task.taskId)).status).toBe('input_required');
        answers[1]?.();
        expect((await result).result?.['content']).toEqual([{ type: 'text', text: 'name="Ada" confirm=true' }]);
      } finally {
        peer.onServerRequest = undefined;
      }
    });

    it('cancelling while input_required works and the pending request is dropped', async () => {
      const task = await createTask(peer, 'confirm_delete', { filename: 'keep.txt' });
      await untilStatus(peer, task.taskId, 'input_required');
      const cancelled = await peer.request('tasks/cancel', { taskId: task.taskId });
      expect(cancelled.result?.['status']).toBe('cancelled');
      expect((await getTask(peer, task.taskId)).status).toBe('cancelled');
    });

    it('R39 R41: params.taskId is authoritative and task results carry no related-task _meta', async () => {
      const a = await createTask(peer, 'slow_compute', { seconds: 0, label: 'e' });
      const b = await createTask(peer, 'slow_compute', { seconds: 0, label: 'f' });
      const got = await peer.request('tasks/get', { taskId: a.taskId, _meta: { [RELATED]: { taskId: b.taskId } } });
      expect(got.result?.['taskId']).toBe(a.taskId);
      // Its `_meta` may carry the task's progress (dev.mcp-tasks/progress), never the related-task key.
      expect((got.result?.['_meta'] as Record<string, unknown> | undefined)?.[RELATED]).toBeUndefined();
      const listed = await peer.request('tasks/list');
      expect(listed.result?.['_meta']).toBeUndefined();
      const running = await createTask(peer, 'slow_compute', { seconds: 5, label: 'g' });
      const cancelled = await peer.request('tasks/cancel', { taskId: running.taskId });
      expect(cancelled.result?.['_meta']).toBeUndefined();
    });

    it('R42 R44: sends notifications/tasks/status on status changes, without related-task _meta', async () => {
      const task = await createTask(peer, 'slow_compute', { seconds: 0.2, label: 'notify' });
      const note = await eventually(() =>
        peer.notifications.find(
          (n) =>
            n.method === 'notifications/tasks/status' &&
            n.params?.['taskId'] === task.taskId &&
            n.params?.['status'] === 'completed',
        ),
      );
      expectTaskShape(note.params as unknown as WireTask);
      expect((note.params?.['_meta'] as Record<string, unknown> | undefined)?.[RELATED]).toBeUndefined();
    });

    it('R45 R46 R47 R48 R58: tasks/list pages with opaque cursors and lists every task the caller can get', async () => {
      const created = new Set<string>();
      for (let i = 0; i < 7; i++)
        created.add((await createTask(peer, 'slow_compute', { seconds: 0, label: `l${i}` })).taskId);
      const seen = new Set<string>();
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await peer.request('tasks/list', cursor === undefined ? {} : { cursor });
        expect(page.error).toBeUndefined();
        const tasks = page.result?.['tasks'] as WireTask[];
        expect(tasks.length).toBeLessThanOrEqual(5);
        for (const task of tasks) {
          expectTaskShape(task);
          seen.add(task.taskId);
        }
        cursor = page.result?.['nextCursor'] as string | undefined;
        pages++;
      } while (cursor !== undefined && pages < 100);
      for (const id of created) expect(seen.has(id)).toBe(true);
      expect((await peer.request('tasks/list', { cursor: 'not-a-cursor' })).error?.code).toBe(-32602);
      expect((await peer.request('tasks/list', { cursor: 7 })).error?.code).toBe(-32602);
    });

    it('R49: cancelling a terminal task is -32602 naming its status', async () => {
      const task = await createTask(peer, 'slow_compute', { seconds: 0, label: 'h' });
      await untilStatus(peer, task.taskId, 'completed');
      const response = await peer.request('tasks/cancel', { taskId: task.taskId });
      expect(response.error).toEqual({
        code: -32602,
        message: "Cannot cancel task: already in terminal status 'completed'",
      });
    });

    it('R50 R51: cancel answers with the task already cancelled, and it stays cancelled when the work would have finished', async () => {
      const task = await createTask(peer, 'slow_compute', { seconds: 1, label: 'i' });
      const response = await peer.request('tasks/cancel', { taskId: task.taskId });
      expect(response.result?.['status']).toBe('cancelled');
      expect(response.result?.['statusMessage']).toBeTypeOf('string');
      await new Promise((resolve) => setTimeout(resolve, 1300));
      expect((await getTask(peer, task.taskId)).status).toBe('cancelled');
      const result = await peer.request('tasks/result', { taskId: task.taskId });
      expect(result.result?.['isError']).toBe(true);
    });

    it('R54: notifications/cancelled for the original request does not cancel the task', async () => {
      const response = await peer.request(
        'tools/call',
        { name: 'slow_compute', arguments: { seconds: 0.5, label: 'j' }, task: {} },
        { id: 'orig-54' },
      );
      const taskId = (response.result?.['task'] as WireTask).taskId;
      await peer.notify('notifications/cancelled', { requestId: 'orig-54', reason: 'test' });
      expect((await untilStatus(peer, taskId, 'completed')).status).toBe('completed');
    });

    it('R55 R56: progress keeps the original token during the task and stops at its end', async () => {
      const token = `tok-${kind}-55`;
      const task = await createTask(peer, 'test_tool_with_progress', {}, {}, { progressToken: token });
      await untilStatus(peer, task.taskId, 'completed');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const progress = peer.notifications.filter(
        (n) => n.method === 'notifications/progress' && n.params?.['progressToken'] === token,
      );
      expect(progress.map((n) => n.params?.['progress'])).toEqual([0, 50, 100]);
      const count = progress.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(
        peer.notifications.filter(
          (n) => n.method === 'notifications/progress' && n.params?.['progressToken'] === token,
        ),
      ).toHaveLength(count);
    });

    it('bad input gets the right JSON-RPC error and never crashes the server', async () => {
      expect((await peer.request('tasks/get')).error?.code).toBe(-32602);
      expect((await peer.request('tasks/get', ['x'] as never)).error?.code).toBe(-32602);
      expect((await peer.sendRaw('{"jsonrpc":"2.0","id":"bad-1","method":5}', 'bad-1'))?.error?.code).toBe(-32600);
      expect((await peer.sendRaw('{"jsonrpc":"1.0","id":"bad-2","method":"tasks/get"}', 'bad-2'))?.error?.code).toBe(
        -32600,
      );
      expect((await peer.sendRaw('{this is not json', null))?.error?.code).toBe(-32700);
      expect((await peer.request('tasks/cancel', { taskId: { nested: true } })).error?.code).toBe(-32602);
      expect((await peer.request('tasks/list', { cursor: null })).error?.code).toBe(-32602);
      const stillThere = await peer.request('tools/call', { name: 'greet', arguments: { name: 'after' } });
      expect(stillThere.result?.['content']).toEqual([{ type: 'text', text: 'Hello, after!' }]);
    });
  });
}
