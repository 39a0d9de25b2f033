import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { eventually, startPeer, type HttpFixture, type Message, type RawPeer } from '../helpers/rawWire.js';

const TASK = 'modelcontextprotocol.io/task';
const RELATED = 'modelcontextprotocol.io/related-task';

function related(taskId: string) {
  return { [RELATED]: { taskId } };
}

for (const kind of ['stdio', 'http'] as const) {
  describe(`SEP-1686 on the raw wire (${kind})`, () => {
    let peer: RawPeer;
    let close: () => Promise<void>;
    let fixture: HttpFixture | undefined;

    beforeAll(async () => {
      ({ peer, close, fixture } = await startPeer(kind));
      await peer.initialize();
    });
    afterAll(async () => close());

    /** Sends a task-augmented call; resolves with the original request's response. */
    function call(
      name: string,
      args: Record<string, unknown>,
      taskId: string,
      extra: Record<string, unknown> = {},
      id?: string,
    ) {
      return peer.request(
        'tools/call',
        { name, arguments: args, _meta: { [TASK]: { taskId, ...extra } } },
        id === undefined ? {} : { id },
      );
    }

    function created(taskId: string): Message | undefined {
      return peer.notifications.find(
        (n) =>
          n.method === 'notifications/tasks/created' &&
          JSON.stringify(n.params) === JSON.stringify({ _meta: related(taskId) }),
      );
    }

    async function get(taskId: string) {
      return peer.request('tasks/get', { taskId, _meta: related(taskId) });
    }

    it('3.1 3.4 4.2: a requestor-named task is announced before the original request gets its normal result', async () => {
      const taskId = randomUUID();
      const response = await call('slow_compute', { seconds: 0.3, label: 'named' }, taskId);
      // The created notification arrived before the response (the peer records messages in order).
      expect(created(taskId)).toBeDefined();
      expect(response.result).toEqual({
        content: [{ type: 'text', text: 'Computed named in 0.3s' }],
        _meta: related(taskId),
      });
    });

    it('4.2 7.1: a second request with an id in use gets -32602 Task ID already exists', async () => {
      const taskId = randomUUID();
      await call('slow_compute', { seconds: 0, label: 'once' }, taskId);
      const again = await call('slow_compute', { seconds: 0, label: 'once' }, taskId);
      expect(again.error).toEqual({ code: -32602, message: `Task ID already exists: ${taskId}` });
      const different = await call('greet', { name: 'x' }, taskId);
      // greet does not run as a task: the _meta is ignored and the call answered normally (spec 4.1).
      expect(different.result?.['content']).toEqual([{ type: 'text', text: 'Hello, x!' }]);
    });

    it('3.2 4.3 4.5: tasks/get reports the proposal’s status, the actual keepAlive and pollFrequency, with related-task _meta', async () => {
      const taskId = randomUUID();
      const pending = call('slow_compute', { seconds: 1, label: 'poll' }, taskId, { keepAlive: 120_000 });
      await eventually(() => created(taskId));
      const running = await get(taskId);
      expect(['submitted', 'working']).toContain(running.result?.['status']);
      expect(running.result).toMatchObject({ taskId, keepAlive: 120_000, pollFrequency: 200, _meta: related(taskId) });
      await pending;
      expect((await get(taskId)).result?.['status']).toBe('completed');
    });

    it('3.3 4.6 7.1: tasks/result only for completed tasks, naming the status otherwise; callable repeatedly', async () => {
      const taskId = randomUUID();
      const pending = call('slow_compute', { seconds: 0.8, label: 'late' }, taskId);
      await eventually(() => created(taskId));
      const early = await peer.request('tasks/result', { taskId, _meta: related(taskId) });
      expect(early.error?.code).toBe(-32602);
      expect(early.error?.message).toMatch(
        /^Cannot retrieve result: Task status is '(submitted|working)', not 'completed'$/,
      );
      await pending;
      const first = await peer.request('tasks/result', { taskId, _meta: related(taskId) });
      expect(first.result).toEqual({
        content: [{ type: 'text', text: 'Computed late in 0.8s' }],
        _meta: related(taskId),
      });
      expect((await peer.request('tasks/result', { taskId, _meta: related(taskId) })).result).toEqual(first.result);
    });

    it('7.2: isError still ends completed; a JSON-RPC error ends failed with an error message', async () => {
      const toolError = randomUUID();
      const answer = await call('failing_job', {}, toolError);
      expect(answer.result?.['isError']).toBe(true);
      expect((await get(toolError)).result?.['status']).toBe('completed');
      const rpcError = randomUUID();
      const failed = await call('protocol_error_job', {}, rpcError);
      expect(failed.error?.code).toBe(-32603);
      const view = (await get(rpcError)).result;
      expect(view?.['status']).toBe('failed');
      expect(view?.['error']).toMatch(/upstream service refused/);
    });

    it('3.5 4.9: tasks/list shows the caller’s tasks by their own ids, with opaque cursors', async () => {
      const taskId = randomUUID();
      await call('slow_compute', { seconds: 0, label: 'listed' }, taskId);
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await peer.request('tasks/list', { ...(cursor && { cursor }), _meta: related(taskId) });
        const tasks = page.result?.['tasks'] as Array<Record<string, unknown>>;
        for (const task of tasks) {
          expect(
            Object.keys(task).every((key) => ['taskId', 'status', 'keepAlive', 'pollFrequency', 'error'].includes(key)),
          ).toBe(true);
          ids.push(task['taskId'] as string);
        }
        cursor = page.result?.['nextCursor'] as string | undefined;
      } while (cursor);
      expect(ids).toContain(taskId);
      expect((await peer.request('tasks/list', { cursor: 'forged', _meta: related(taskId) })).error?.code).toBe(-32602);
    });

    it('3.6 4.10: tasks/delete removes a terminal task and refuses a running one', async () => {
      const done = randomUUID();
      await call('slow_compute', { seconds: 0, label: 'gone' }, done);
      const deleted = await peer.request('tasks/delete', { taskId: done, _meta: related(done) });
      expect(deleted.result).toEqual({ _meta: related(done) });
      expect((await get(done)).error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
      const running = randomUUID();
      const pending = call('slow_compute', { seconds: 1, label: 'kept' }, running);
      await eventually(() => created(running));
      const refused = await peer.request('tasks/delete', { taskId: running, _meta: related(running) });
      expect(refused.error?.code).toBe(-32602);
      expect(refused.error?.message).toMatch(/cancel it first/);
      await pending;
    });

    it('4.4 4.7: associated requests carry the related-task _meta and the task stays input_required until all are answered', async () => {
      const taskId = randomUUID();
      const asked: Message[] = [];
      const release: Array<() => void> = [];
      peer.onServerRequest = (request) => {
        asked.push(request);
        return new Promise((resolve) =>
          release.push(() =>
            resolve({
              action: 'accept',
              content: request.params?.['message'] === 'Your name?' ? { name: 'Lin' } : { confirm: true },
            }),
          ),
        );
      };
      try {
        const pending = call('multi_input', {}, taskId);
        await eventually(() => asked.length === 2);
        for (const request of asked)
          expect((request.params?.['_meta'] as Record<string, unknown>)[RELATED]).toEqual({ taskId });
        expect((await get(taskId)).result?.['status']).toBe('input_required');
        release[0]?.();
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect((await get(taskId)).result?.['status']).toBe('input_required');
        release[1]?.();
        expect((await pending).result?.['content']).toEqual([{ type: 'text', text: 'name="Lin" confirm=true' }]);
      } finally {
        peer.onServerRequest = undefined;
      }
    });

    it('4.8: notifications/cancelled for the original request cancels the task and drops its pending input; a late one is ignored', async () => {
      const taskId = randomUUID();
      void call('confirm_delete', { filename: 'keep.me' }, taskId, {}, `orig-${taskId}`);
      await eventually(async () => (await get(taskId)).result?.['status'] === 'input_required');
      await peer.notify('notifications/cancelled', { requestId: `orig-${taskId}`, reason: 'user closed the dialog' });
      await eventually(async () => (await get(taskId)).result?.['status'] === 'cancelled');
      const done = randomUUID();
      await call('slow_compute', { seconds: 0, label: 'finished' }, done, {}, `orig-${done}`);
      await peer.notify('notifications/cancelled', { requestId: `orig-${done}` });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await get(done)).result?.['status']).toBe('completed');
    });

    it('4.5: keepAlive counts from the terminal status, not from creation', async () => {
      const taskId = randomUUID();
      await call('slow_compute', { seconds: 1.2, label: 'kept-alive' }, taskId, { keepAlive: 1000 });
      // 1.2 s after creation: counted from creation it would be gone already.
      expect((await get(taskId)).result?.['status']).toBe('completed');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await get(taskId)).error?.message).toBe('Failed to retrieve task: Task has expired');
    });

    it('3.1 4.1: resources/read and prompts/get carry tasks where the server opted in', async () => {
      const readTask = randomUUID();
      const read = await peer.request('resources/read', {
        uri: 'test://static-text',
        _meta: { [TASK]: { taskId: readTask } },
      });
      expect(created(readTask)).toBeDefined();
      expect((read.result?.['contents'] as Array<{ text: string }>)[0]?.text).toBe(
        'This is the content of the static text resource.',
      );
      expect((await get(readTask)).result?.['status']).toBe('completed');
      const promptTask = randomUUID();
      const prompt = await peer.request('prompts/get', {
        name: 'test_simple_prompt',
        _meta: { [TASK]: { taskId: promptTask } },
      });
      expect(created(promptTask)).toBeDefined();
      expect(JSON.stringify(prompt.result?.['messages'])).toContain('This is a simple prompt for testing.');
      const result = await peer.request('tasks/result', { taskId: promptTask, _meta: related(promptTask) });
      expect(result.result?.['messages']).toEqual(prompt.result?.['messages']);
    });

    it('7.1: unknown ids are -32602 and a request cannot ask for both kinds of task', async () => {
      expect((await get('never-created')).error).toEqual({
        code: -32602,
        message: 'Failed to retrieve task: Task not found',
      });
      const both = await peer.request('tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 0 },
        task: {},
        _meta: { [TASK]: { taskId: randomUUID() } },
      });
      expect(both.error?.code).toBe(-32602);
      const badId = await peer.request('tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 0 },
        _meta: { [TASK]: { taskId: 7 } },
      });
      expect(badId.error?.code).toBe(-32602);
    });

    if (kind === 'http') {
      it('retry recipe: after the connection drops mid-request, re-sending learns the task exists and polls it', async () => {
        const http = peer as unknown as { url: string; sessionId: string; protocolVersion: string };
        const taskId = randomUUID();
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: `drop-${taskId}`,
          method: 'tools/call',
          params: { name: 'slow_compute', arguments: { seconds: 1, label: 'survivor' }, _meta: { [TASK]: { taskId } } },
        });
        const controller = new AbortController();
        const response = await fetch(http.url, {
          method: 'POST',
          signal: controller.signal,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': http.sessionId,
            'mcp-protocol-version': http.protocolVersion,
          },
          body,
        });
        // Read until the task is announced, then drop the connection.
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        let seen = '';
        while (!seen.includes('notifications/tasks/created'))
          seen += new TextDecoder().decode((await reader.read()).value);
        controller.abort();
        const retry = await call('slow_compute', { seconds: 1, label: 'survivor' }, taskId);
        expect(retry.error).toEqual({ code: -32602, message: `Task ID already exists: ${taskId}` });
        await eventually(async () => (await get(taskId)).result?.['status'] === 'completed');
        const result = await peer.request('tasks/result', { taskId, _meta: related(taskId) });
        expect(result.result?.['content']).toEqual([{ type: 'text', text: 'Computed survivor in 1s' }]);
        expect(fixture).toBeDefined();
      });
    }
  });
}
