import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FIXTURE, HttpFixture } from '../helpers/rawWire.js';

type StreamMessage = {
  type: string;
  task?: { taskId: string; status: string };
  result?: unknown;
  error?: { message: string };
};

async function collect(
  stream: AsyncGenerator<unknown>,
  onCreated?: (taskId: string) => void | Promise<void>,
): Promise<StreamMessage[]> {
  const seen: StreamMessage[] = [];
  for await (const message of stream as AsyncGenerator<StreamMessage>) {
    seen.push(message);
    if (message.type === 'taskCreated' && message.task) await onCreated?.(message.task.taskId);
  }
  return seen;
}

for (const kind of ['stdio', 'http'] as const) {
  describe(`interop: the official SDK 1.32 client's callToolStream (${kind})`, () => {
    let client: Client;
    let fixture: HttpFixture | undefined;

    beforeAll(async () => {
      client = new Client({ name: 'sdk-1.32-interop', version: '1.0.0' }, { capabilities: { elicitation: {} } });
      client.setRequestHandler(ElicitRequestSchema, async (request) => ({
        action: 'accept',
        content: { confirm: String(request.params.message).includes('yes-please') },
      }));
      if (kind === 'stdio') {
        await client.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [FIXTURE, '--stdio'],
            env: { ...process.env, MCP_TASKS_STORE: 'memory' } as Record<string, string>,
          }),
        );
      } else {
        fixture = await HttpFixture.start();
        await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
      }
      await client.listTools();
    });
    afterAll(async () => {
      await client.close();
      await fixture?.close();
    });

    it('runs a task to completion: taskCreated, status updates, result', async () => {
      const seen = await collect(
        client.experimental.tasks.callToolStream(
          { name: 'slow_compute', arguments: { seconds: 0.5, label: 'v1' } },
          undefined,
          { task: { ttl: 60_000 } },
        ),
      );
      expect(seen[0]?.type).toBe('taskCreated');
      expect(seen.some((m) => m.type === 'taskStatus')).toBe(true);
      expect(seen.at(-1)).toMatchObject({
        type: 'result',
        result: { content: [{ type: 'text', text: 'Computed v1 in 0.5s' }] },
      });
    });

    it('calls a required tool as a task on its own (it read execution.taskSupport)', async () => {
      const seen = await collect(
        client.experimental.tasks.callToolStream({ name: 'generate_report', arguments: { pages: 2 } }),
      );
      expect(seen[0]?.type).toBe('taskCreated');
      expect(seen.at(-1)).toMatchObject({
        type: 'result',
        result: { content: [{ type: 'text', text: 'Report ready: 2 pages' }] },
      });
    });

    it('cancels a running task', async () => {
      let cancelled: { status: string } | undefined;
      const seen = await collect(
        client.experimental.tasks.callToolStream(
          { name: 'slow_compute', arguments: { seconds: 30, label: 'stop' } },
          undefined,
          { task: {} },
        ),
        async (taskId) => {
          cancelled = (await client.experimental.tasks.cancelTask(taskId)) as { status: string };
        },
      );
      expect(cancelled?.status).toBe('cancelled');
      expect(seen.at(-1)?.type).toBe('error');
      expect(seen.at(-1)?.error?.message).toMatch(/cancelled/);
      const taskId = seen[0]?.task?.taskId as string;
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    });

    it('answers input required through tasks/result', async () => {
      const seen = await collect(
        client.experimental.tasks.callToolStream(
          { name: 'confirm_delete', arguments: { filename: 'yes-please.txt' } },
          undefined,
          { task: {} },
        ),
      );
      expect(seen.at(-1)).toMatchObject({
        type: 'result',
        result: { content: [{ type: 'text', text: 'Deleted yes-please.txt' }] },
      });
    });

    it('lists its tasks', async () => {
      const { tasks } = await client.experimental.tasks.listTasks();
      expect(tasks.length).toBeGreaterThanOrEqual(3);
    });
  });
}
