import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf } from '../../src/client/index.js';
import { tempDir } from '../helpers/tmp.js';
import {
  EVERYTHING_STDIO,
  startProxyProcess,
  until,
  wiretap,
  WIRETAP,
  type ProxyProcess,
} from './helpers/proxyProcess.js';

/**
 * What passes through the gateway besides tool calls, against @modelcontextprotocol/server-everything over stdio,
 * seen by the SDK 1.32 client: resources (list, templates, read, subscribe), prompts, completion, logging, and the
 * upstream's notifications (list changed, resource updated, log messages). Then the per-tool `timeoutMs` and
 * `concurrency` settings of the config file.
 */

const dir = tempDir('mcp-tasks-gateway-passthrough-');
const clients: Array<{ close(): Promise<void> }> = [];
const proxies: ProxyProcess[] = [];

async function startWith(config: Record<string, unknown>, log: string): Promise<ProxyProcess> {
  const file = join(dir, `${proxies.length}.json`);
  writeFileSync(file, JSON.stringify(config));
  const proxy = await startProxyProcess([
    '--store',
    'memory',
    '--config',
    file,
    '--',
    process.execPath,
    WIRETAP,
    log,
    ...EVERYTHING_STDIO,
  ]);
  proxies.push(proxy);
  return proxy;
}

async function sdkClient(url: string): Promise<Client> {
  const client = new Client({ name: 'sdk-1.32', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  for (const proxy of proxies) await proxy.stop();
});

describe('gateway pass-through', () => {
  let proxy: ProxyProcess;
  beforeAll(async () => {
    proxy = await startWith({}, join(dir, 'passthrough.jsonl'));
  });

  it('serves the upstream resources: list, templates, read', async () => {
    const client = await sdkClient(proxy.url);
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: true });
    const { resources } = await client.listResources();
    const doc = resources.find((resource) => resource.uri.startsWith('demo://resource/static/document/'));
    expect(doc).toBeDefined();
    const read = await client.readResource({ uri: doc?.uri as string });
    expect(read.contents[0]?.uri).toBe(doc?.uri);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toContain(
      'demo://resource/dynamic/text/{resourceId}',
    );
    const dynamic = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
    expect(JSON.stringify(dynamic.contents)).toContain('7');
  });

  it('serves the upstream prompts and completion', async () => {
    const client = await sdkClient(proxy.url);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(
      expect.arrayContaining(['simple-prompt', 'args-prompt', 'completable-prompt']),
    );
    const prompt = await client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lisbon' } });
    expect(JSON.stringify(prompt.messages)).toContain('Lisbon');
    const completed = await client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'Sa' },
    });
    expect(completed.completion.values).toEqual(['Sales']);
    const narrowed = await client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Marketing' } },
    });
    expect(narrowed.completion.values).toEqual(['Grace', 'Henry', 'Iris']);
  });

  it("forwards the upstream's resources/list_changed, and the new resource is listed", async () => {
    const client = await sdkClient(proxy.url);
    let changed = 0;
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void changed++);
    const result = await client.callTool({
      name: 'gzip-file-as-resource',
      arguments: { name: 'hello.txt.gz', data: 'data:text/plain;base64,SGVsbG8gZ2F0ZXdheQ==' },
    });
    expect(JSON.stringify(result)).toContain('hello.txt.gz');
    await until(() => changed > 0, 10_000, 'notifications/resources/list_changed');
    const { resources } = await client.listResources();
    expect(resources.some((resource) => resource.uri.includes('hello.txt.gz'))).toBe(true);
  });

  it('forwards logging/setLevel, log messages and updates of a subscribed resource', async () => {
    const client = await sdkClient(proxy.url);
    const logs: string[] = [];
    const updated: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.level));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await client.setLoggingLevel('debug');
    await client.subscribeResource({ uri: 'demo://resource/dynamic/text/1' });
    await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    try {
      // The upstream sends both every 5 s.
      await until(() => logs.length > 0 && updated.length > 0, 20_000, 'a log message and a resource update');
      expect(updated).toContain('demo://resource/dynamic/text/1');
    } finally {
      await client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
      await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    }
  });
});

describe('gateway config: per-tool timeoutMs and concurrency', () => {
  const tool = 'trigger-long-running-operation';
  const callsIn = (log: string) =>
    wiretap(log).messages.filter(
      (m) => m['method'] === 'tools/call' && (m['params'] as { name?: string } | undefined)?.name === tool,
    );

  it('timeoutMs: the upstream call is cancelled and the task fails after that long', async () => {
    const log = join(dir, 'timeout.jsonl');
    const proxy = await startWith({ tools: { [tool]: { timeoutMs: 1500 } } }, log);
    const client = await TaskClient.connect({ url: proxy.url }, { dialect: '2025-11-25' });
    clients.push(client);
    const handle = await client.callTool(tool, { duration: 30, steps: 30 });
    const outcome = await handle.outcome();
    expect(outcome.status).toBe('failed');
    expect(outcome.snapshot.statusMessage).toMatch(/did not finish within 1500 ms/);
    const call = callsIn(log)[0];
    const cancelled = wiretap(log).messages.find(
      (m) =>
        m['method'] === 'notifications/cancelled' &&
        (m['params'] as { requestId?: unknown }).requestId === call?.['id'],
    );
    expect(cancelled).toBeDefined();
    // A call that finishes in time is untouched.
    expect(textOf(await (await client.callTool(tool, { duration: 0.2, steps: 1 })).result())).toContain('completed');
  });

  it('concurrency: calls beyond the limit wait for a slot before they reach the upstream', async () => {
    const log = join(dir, 'concurrency.jsonl');
    const proxy = await startWith({ tools: { [tool]: { concurrency: 1 } } }, log);
    const client = await TaskClient.connect({ url: proxy.url }, { dialect: 'ext-2026' });
    clients.push(client);
    const first = await client.callTool(tool, { duration: 30, steps: 30 });
    await until(() => callsIn(log).length === 1, 10_000, 'the first call upstream');
    const second = await client.callTool(tool, { duration: 0.2, steps: 1 });
    expect(second.isTask).toBe(true);
    // The second is a working task, but its call waits while the first holds the only slot.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(callsIn(log)).toHaveLength(1);
    expect((await first.cancel()).status).toBe('cancelled');
    expect(textOf(await second.result())).toContain('Long running operation completed');
    expect(callsIn(log)).toHaveLength(2);
  });
});
