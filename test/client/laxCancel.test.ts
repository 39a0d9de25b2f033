import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EXIT_CODES } from '../../src/cli/exitCodes.js';
import { TaskClient, TaskRpcError, textOf } from '../../src/client/index.js';
import { ensureBuilt, jsonLines, runCli } from '../cli/helpers/cli.js';
import { startLaxCancelServer, type LaxCancelServer } from '../fixtures/laxCancelServer.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * Strict in what it sends, lenient in what it accepts: a real v1-SDK server that answers -32603 (not spec R49's
 * -32602) to a cancel it will not honour. For a finished task the client falls back to tasks/get and reports the
 * task's real final status; for a task that is still working the refusal stays an error.
 */
describe('cancel against a server that refuses with -32603', () => {
  let server: LaxCancelServer;
  let client: TaskClient;

  beforeAll(async () => {
    // Before any connection: a rebuild blocks this process for a while.
    ensureBuilt();
    server = await startLaxCancelServer();
    client = await TaskClient.connect({ url: server.url });
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('TaskClient: a cancel of a completed task reports completed, with the refusal as the acknowledgement', async () => {
    const handle = await client.callTool('countdown', { ms: 20 });
    expect(handle.isTask).toBe(true);
    expect(textOf(await handle.result())).toBe('counted down 20 ms');
    const taskId = handle.taskId as string;

    const attached = await client.attach(taskId, { follow: false });
    const outcome = await attached.cancel();
    expect(outcome.status).toBe('completed');
    expect(attached.cancelAcknowledgement).toMatchObject({ kind: 'rejected', error: { code: -32603 } });
    expect(outcome.status === 'completed' && textOf(outcome.result)).toBe('counted down 20 ms');
  });

  it('TaskClient: the same refusal for a task still working stays an error, and the task goes on', async () => {
    const handle = await client.callTool('stubborn', { ms: 800 });
    const refusal = await handle.cancel().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TaskRpcError);
    expect((refusal as TaskRpcError).code).toBe(-32603);
    expect((await handle.outcome()).status).toBe('completed');
  });

  it('mcp-tasks cancel of a completed task exits 0 and reports completed', async () => {
    const handle = await client.callTool('countdown', { ms: 10 });
    await handle.outcome();
    const env = { MCP_TASKS_HANDLES: join(tempDir(), 'handles.json') };
    const run = await runCli(['--url', server.url, '--json', 'cancel', handle.taskId as string], { env });
    expect(run.code).toBe(EXIT_CODES.completed);
    expect(jsonLines(run.stdout).at(-1)).toMatchObject({
      type: 'outcome',
      status: 'completed',
      taskId: handle.taskId,
    });
  });
});
