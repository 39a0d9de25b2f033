import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HandleStore, TaskClient, textOf } from '../../src/client/index.js';
import { ensureBuilt, startCli } from '../cli/helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { startEverythingHttp, type RunningServer } from './helpers/everything.js';

/**
 * A host starts a long task and is killed (SIGKILL: no cleanup, no goodbye); a new host process finds the task in
 * the handle store and carries on. The first host is the `mcp-tasks` binary; the second is this test process.
 */
let server: RunningServer;

beforeAll(async () => {
  ensureBuilt();
  server = await startEverythingHttp();
});

afterAll(async () => {
  await server.stop();
});

async function startAndKillHost(store: string, args: string[]): Promise<string> {
  const host = startCli(['--json', '--url', server.url, 'call', ...args], { env: { MCP_TASKS_HANDLES: store } });
  await host.waitFor((stdout) => stdout.includes('"type":"task"') && stdout.includes('"type":"status"'));
  const taskId = (JSON.parse(host.stdout().split('\n')[0] as string) as { taskId: string }).taskId;
  host.child.kill('SIGKILL');
  const exited = await host.done;
  expect(exited.signal).toBe('SIGKILL');
  return taskId;
}

describe('host restart', () => {
  it('resumes a task from the handle store after the host was killed, and gets its result', async () => {
    const store = join(tempDir(), 'handles.json');
    const taskId = await startAndKillHost(store, ['simulate-research-query', 'topic=restarts']);
    const [record] = await new HandleStore(store).list();
    expect(record).toMatchObject({ taskId, dialect: '2025-11-25', toolName: 'simulate-research-query' });
    expect(record?.sessionId).toBeDefined();

    const client = await TaskClient.connect({ url: server.url }, { store });
    try {
      // The task lives in the killed host's session; the store brought it back without a new handshake.
      expect(client.sessionId).toBe(record?.sessionId);
      const handles = await client.resume();
      expect(handles.map((handle) => handle.taskId)).toEqual([taskId]);
      const result = await handles[0]!.result();
      expect(textOf(result)).toContain('# Research Report: restarts');
      // Delivered: no longer in flight.
      expect(await new HandleStore(store).get(taskId)).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('answers the input a resumed task asks for through the new host', async () => {
    const store = join(tempDir(), 'handles.json');
    const taskId = await startAndKillHost(store, ['simulate-research-query', 'topic=python', 'ambiguous=true']);
    const asked: Array<string | undefined> = [];
    const client = await TaskClient.connect(
      { url: server.url },
      {
        store,
        elicitation: (_params, context) => {
          asked.push(context.taskId);
          return { action: 'accept', content: { interpretation: 'programming' } };
        },
      },
    );
    try {
      const [handle] = await client.resume();
      expect(handle?.taskId).toBe(taskId);
      expect(textOf(await handle!.result())).toContain('python (programming)');
      expect(asked).toEqual([taskId]);
    } finally {
      await client.close();
    }
  });
});
