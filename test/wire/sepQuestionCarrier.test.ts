// SEP-1686 sends a task's questions on its original request's stream (spec 4.4). While that request is held, a poll
// from another connection must leave them to it, however long the question waits; once the request is gone, a poll
// carries them. One server, two sessions of one principal: the holder and a poller.
import { randomUUID } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { SEP_CARRIER_WINDOW_MS } from '../../src/dialects/sep1686/QuestionCarrier.js';
import { HttpFixture, eventually, type HttpPeer, type Message } from '../helpers/rawWire.js';
import { logged, loggedTasks } from '../helpers/stepLog.js';
import { workflowEnvironment } from '../helpers/workflowWire.js';

type Json = Record<string, unknown>;

const TOKEN = 'token-carrier';
const related = (taskId: string) => ({ _meta: { 'modelcontextprotocol.io/related-task': { taskId } } });

async function session(fixture: HttpFixture): Promise<HttpPeer> {
  const peer = await fixture.peer({ authorization: `Bearer ${TOKEN}` });
  await peer.initialize({ elicitation: {} });
  return peer;
}

describe('SEP-1686: the stream that carries a question', () => {
  it('leaves a question to its live original request past the mark window, and a poll carries it once that request is gone', async () => {
    const env = workflowEnvironment('sqlite', { MCP_TASKS_TEST_TOKENS: `${TOKEN}:carrier-owner` });
    const fixture = await HttpFixture.start({ env });
    try {
      const holder = await session(fixture);
      const heldQuestions: Message[] = [];
      // The holder sees the question and never answers it.
      holder.onServerRequest = (request) => {
        heldQuestions.push(request);
        return new Promise<Json>(() => undefined);
      };
      const poller = await session(fixture);
      const polled: Array<{ request: Message; answer(result: Json): void }> = [];
      poller.onServerRequest = (request) => new Promise<Json>((answer) => polled.push({ request, answer }));
      const get = async (taskId: string) =>
        (await poller.request('tasks/get', { taskId, ...related(taskId) })).result as Json;

      const taskId = randomUUID();
      // Held open until the task ends; its answer is not awaited here.
      holder
        .request('tools/call', {
          name: 'journaled_question',
          arguments: { label: 'carried' },
          _meta: { 'modelcontextprotocol.io/task': { taskId, keepAlive: 600_000 } },
        })
        .catch(() => undefined);
      await eventually(async () => (await get(taskId))['status'] === 'input_required' && heldQuestions.length === 1);
      expect(heldQuestions[0]?.method).toBe('elicitation/create');

      // A window and a half: the holder renews its mark, so no poll carries the question meanwhile.
      const until = Date.now() + SEP_CARRIER_WINDOW_MS * 1.5;
      while (Date.now() < until) {
        expect((await get(taskId))['status']).toBe('input_required');
        expect(polled).toHaveLength(0);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }

      // The holder ends its session (a dropped stream alone is not the end: the transport keeps the request for the
      // stream's resumption): the request is let go, and the next poll carries the question at once (well within a
      // window).
      const ended = await fetch(fixture.url, {
        method: 'DELETE',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'mcp-session-id': holder.sessionId ?? '',
          'mcp-protocol-version': holder.protocolVersion ?? '',
        },
      });
      expect(ended.status).toBe(200);
      await holder.close();
      const gone = Date.now();
      const asked = await eventually(async () => {
        await get(taskId);
        return polled.shift();
      }, SEP_CARRIER_WINDOW_MS / 2);
      expect(Date.now() - gone).toBeLessThan(SEP_CARRIER_WINDOW_MS / 2);
      expect(asked.request.method).toBe('elicitation/create');
      expect(asked.request.params?.['message']).toBe('Confirm carried?');
      expect((asked.request.params?.['_meta'] as Json)['modelcontextprotocol.io/related-task']).toEqual({ taskId });
      asked.answer({ action: 'accept', content: { confirm: true } });

      const done = await eventually(async () => {
        const task = await get(taskId);
        return task['status'] === 'completed' ? task : undefined;
      });
      expect(done['status']).toBe('completed');
      const result = (await poller.request('tasks/result', { taskId, ...related(taskId) })).result as Json;
      expect(result['structuredContent']).toEqual({ confirm: true, prepareRuns: 1 });
      // Asked once: the poll carried it once, on its one connection.
      expect(polled).toHaveLength(0);
      const [key] = loggedTasks(env.MCP_TASKS_STEP_LOG);
      expect(logged(env.MCP_TASKS_STEP_LOG, key as string)).toEqual(['prepare', 'finish']);
      await poller.close();
    } finally {
      await fixture.close();
    }
  });
});
