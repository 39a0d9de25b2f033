import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import { TaskClient, textOf } from '../../src/client/index.js';
import { SqliteStore } from '../../src/stores/index.js';
import { startEverythingHttp, type RunningServer } from '../client/helpers/everything.js';
import { tempDir } from '../helpers/tmp.js';
import { startProxyProcess, type ProxyProcess } from './helpers/proxyProcess.js';

/**
 * The gateway in front of @modelcontextprotocol/server-everything over Streamable HTTP: ext-tasks as requestor, a
 * kill -9 of the gateway mid-task followed by a restart on the same SQLite store, and an upstream that goes away.
 */

const dir = tempDir('mcp-tasks-gateway-http-');
const db = join(dir, 'tasks.db');
const config = join(dir, 'proxy.json');
let everything: RunningServer;
let upstreamStopped = false;
let proxy: ProxyProcess;
const clients: TaskClient[] = [];

async function connect(url: string): Promise<TaskClient> {
  const client = await TaskClient.connect({ url }, { dialect: '2025-11-25' });
  clients.push(client);
  return client;
}

beforeAll(async () => {
  // Short leases, so the restarted gateway recovers the tasks of the killed one quickly.
  writeFileSync(config, JSON.stringify({ engine: { leaseMs: 1000, recoveryIntervalMs: 500 } }));
  everything = await startEverythingHttp();
  proxy = await startProxyProcess(['--store', db, '--config', config, '--upstream', everything.url]);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await proxy?.stop();
  if (!upstreamStopped) await everything?.stop();
});

describe('gateway over Streamable HTTP', () => {
  it('serves ext-tasks (2025-11-25 session) a bridged upstream task', async () => {
    const client = new Client({ name: 'ext-tasks-via-gateway', version: '1.0.0' }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(new URL(proxy.url)));
    const session = createTaskSessionFromClient(client, { endpointId: 'gateway' });
    try {
      const execution = await session.callTool<{ content: Array<{ text?: string }> }>(
        'simulate-research-query',
        { topic: 'lighthouses' },
        { task: { preference: 'prefer' } },
      );
      expect(execution.kind).toBe('task');
      const { outcome } = await execution.settle({ signal: AbortSignal.timeout(30_000) });
      expect(outcome.status).toBe('completed');
      if (outcome.status === 'completed')
        expect(outcome.result.content[0]?.text).toContain('Research Report: lighthouses');
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('survives kill -9 mid-task: results kept, the upstream task followed to its end, other calls failed', async () => {
    const client = await connect(proxy.url);
    const done = await client.callTool('echo', { message: 'kept across restarts' });
    expect(textOf(await done.result())).toContain('kept across restarts');
    const bridged = await client.callTool('simulate-research-query', { topic: 'restarts' });
    const plain = await client.callTool('trigger-long-running-operation', { duration: 20, steps: 20 });
    // The upstream task is under way, and known durably, before the gateway dies.
    const store = new SqliteStore({ path: db });
    await store.init();
    for (let tries = 0; (await store.get(bridged.taskId as string))?.meta['upstreamTask'] === undefined; tries++) {
      if (tries > 200) throw new Error('the upstream task was never recorded');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await proxy.kill();

    proxy = await startProxyProcess(['--store', db, '--config', config, '--upstream', everything.url]);
    const after = await connect(proxy.url);
    expect(textOf(await (await after.attach(done.taskId as string)).result())).toContain('kept across restarts');
    const report = textOf(await (await after.attach(bridged.taskId as string)).result());
    expect(report).toContain('Research Report: restarts');
    const interrupted = await (await after.attach(plain.taskId as string)).outcome();
    expect(interrupted.status).toBe('failed');
    expect(interrupted.snapshot.statusMessage).toMatch(/not re-run because it is not marked safe to retry/);

    // The gateway's task was following the upstream task it started before the kill, in the session of then (which
    // also holds the ext-tasks test's task), and that task ran to its end.
    const record = await store.get(bridged.taskId as string);
    await store.close();
    const ref = record?.meta['upstreamTask'] as { taskId: string; sessionId: string };
    expect(ref.sessionId).toEqual(expect.any(String));
    const upstream = await TaskClient.connect(
      { url: everything.url, sessionId: ref.sessionId, protocolVersion: '2025-11-25' },
      { dialect: '2025-11-25' },
    );
    clients.push(upstream);
    const listed = await upstream.sdk.request({ method: 'tasks/list', params: {} }, z.looseObject({}));
    const tasks = listed['tasks'] as Array<{ taskId: string; status: string }>;
    expect(tasks).toHaveLength(2);
    expect(tasks.find((task) => task.taskId === ref.taskId)?.status).toBe('completed');
  });

  it('an upstream that is down gives a clear error, never a task stuck working', async () => {
    const client = await connect(proxy.url);
    await client.listTools();
    await everything.stop();
    upstreamStopped = true;
    const handle = await client.callTool('echo', { message: 'nobody home' });
    expect(handle.isTask).toBe(true);
    const outcome = await handle.outcome();
    expect(outcome.status).toBe('failed');
    expect(outcome.snapshot.statusMessage).toMatch(/upstream server \(http .*\) failed/);
  });
});
