import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { CLIENT_KEY_HEADER } from '../../src/server/limits/clientKey.js';
import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../src/server/index.js';
import { withSteps } from '../../src/workflow/index.js';
import { ModernPeer } from '../helpers/rawWire.js';

type ToolResult = {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

function createServer(): McpServer {
  const server = new McpServer({ name: 'fallback-answer', version: '1.0.0' });
  server.registerTool(
    'ask',
    { inputSchema: z.object({ label: z.string() }) },
    withSteps<{ label: string }>(async ({ label }, step) => {
      const answer = await step.elicit('colour', {
        method: 'elicitation/create',
        params: {
          message: `Which colour for ${label}?`,
          requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] },
        },
      });
      return { content: [{ type: 'text', text: `${label}: ${JSON.stringify(answer)}` }] };
    }),
  );
  return server;
}

/**
 * spec R64 with the fallback tools: without authentication a task's id reaches it, but only its owner (the session
 * that started it) is asked its question and may answer it; to anyone else task_answer is a missing task's.
 */
describe('task_answer without authentication', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;

  beforeAll(async () => {
    tasks = await createMcpTasks({
      server: createServer,
      tools: { ask: { taskSupport: 'optional' } },
      store: 'memory',
      fallbackTools: true,
      fallbackAfterMs: 200,
    });
    http = await serveHttp(tasks, { port: 0 });
  });
  afterAll(async () => {
    await http.close();
    await tasks.close();
  });

  /**
   * A 2026-07-28 host without the tasks extension (so the fallback tools serve it) that can be asked nothing on the
   * call itself; `key` tells it apart from another host at the same address.
   */
  function host(key: string) {
    const peer = new ModernPeer(http.url, { [CLIENT_KEY_HEADER]: key });
    return async (name: string, args: Record<string, unknown>) => {
      const reply = await peer.request('tools/call', { name, arguments: args }, { declare: false });
      return reply.error !== undefined ? { error: reply.error } : { result: reply.result as ToolResult };
    };
  }

  it("answers another host's task_answer as for a missing task, shows it no question, and takes the owner's", async () => {
    const owner = host('owner-host');
    const stranger = host('stranger-host');
    const started = await owner('ask', { label: 'the shed' });
    const taskId = started.result?.structuredContent?.['taskId'] as string;
    expect(taskId).toBeTruthy();
    const asked = await owner('task_status', { taskId });
    expect(asked.result?.structuredContent?.['question']).toMatchObject({ message: 'Which colour for the shed?' });

    // The id reaches the task (id-as-capability), but not its question.
    const seen = await stranger('task_status', { taskId });
    expect(seen.result?.structuredContent?.['status']).toBe('input_required');
    expect(seen.result?.structuredContent?.['question']).toBeUndefined();
    expect(JSON.stringify(seen.result)).not.toContain('Which colour');
    const absent = '00000000-0000-4000-8000-000000000000';
    const foreign = await stranger('task_answer', { taskId, answer: 'black' });
    const missing = await stranger('task_answer', { taskId: absent, answer: 'black' });
    expect(missing.error).toBeDefined();
    expect(JSON.stringify(foreign)).toBe(JSON.stringify(missing).replaceAll(absent, taskId));
    expect((await tasks.engine.store.get(taskId))?.status).toBe('input_required');

    const answered = await owner('task_answer', { taskId, answer: 'green' });
    expect(answered.result?.content[0]?.text).toBe(`Answered; task ${taskId} goes on.`);
    const result = await owner('task_result', { taskId, waitMs: 5000 });
    expect(result.result?.content[0]?.text).toBe('the shed: {"action":"accept","content":{"colour":"green"}}');
  });
});
