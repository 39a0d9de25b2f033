import { afterEach, describe, expect, it } from 'vitest';

import { TaskClient, TaskNotSupportedError, textOf } from '../../src/client/index.js';
import { observe } from './helpers/observe.js';
import { startV1TaskServer, type V1TaskServer } from './helpers/v1TaskServer.js';

/**
 * The first cancellation path of the seed document: what the server did not declare is not used. Real servers built
 * with the v1 SDK, one without `tasks` at all and one with task-augmented tools/call but no `tasks.cancel`.
 */
describe('capabilities the server did not declare', () => {
  let server: V1TaskServer | undefined;
  let client: TaskClient | undefined;

  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });

  it('makes no task when the server has no tasks capability, and runs the call plainly', async () => {
    server = await startV1TaskServer(undefined);
    client = await TaskClient.connect({ url: server.url });
    expect(client.dialect).toBe('none');
    // spec R3 R4
    await expect(client.callTool('countdown', { ms: 10 }, { mode: 'task' })).rejects.toMatchObject({
      feature: 'tasks.requests.tools.call',
    });
    const handle = await client.callTool('countdown', { ms: 10 });
    expect(handle.isTask).toBe(false);
    expect(textOf(await handle.result())).toBe('counted down 10 ms');
  });

  it('does not send tasks/cancel when the server did not declare tasks.cancel, and the task carries on', async () => {
    server = await startV1TaskServer({ requests: { tools: { call: {} } } });
    client = await TaskClient.connect({ url: server.url });
    expect(client.dialect).toBe('2025-11-25');
    const handle = await client.callTool('countdown', { ms: 600 });
    expect(handle.isTask).toBe(true);
    const seen = observe(handle);
    const refusal = await handle.cancel().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TaskNotSupportedError);
    expect((refusal as TaskNotSupportedError).feature).toBe('tasks.cancel');
    expect(handle.cancelAcknowledgement).toBeUndefined();
    const outcome = await handle.outcome();
    expect(outcome.status).toBe('completed');
    // The UI went back to the plain status once the cancel was refused.
    expect(seen.at(-1)?.cancelRequested).toBeUndefined();
    // Nor is tasks/list used without tasks.list.
    await expect(client.listTasks()).rejects.toMatchObject({ feature: 'tasks.list' });
  });
});
