import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf } from '../../src/client/index.js';
import { tempDir } from '../helpers/tmp.js';
import { FILESYSTEM_ENTRY, startProxyProcess, type ProxyProcess } from './helpers/proxyProcess.js';

/** The gateway in front of @modelcontextprotocol/server-filesystem (no tasks of its own) over stdio. */

const dir = tempDir('mcp-tasks-gateway-fs-');
const root = join(dir, 'root');
let proxy: ProxyProcess;
const clients: TaskClient[] = [];

beforeAll(async () => {
  mkdirSync(join(root, 'notes'), { recursive: true });
  writeFileSync(join(root, 'notes', 'hello.txt'), 'Hello from the filesystem server\n');
  proxy = await startProxyProcess([
    '--store',
    'memory',
    '--tools',
    '*=optional,write_*=forbidden,read_text_file=required',
    '--',
    process.execPath,
    FILESYSTEM_ENTRY,
    root,
  ]);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await proxy?.stop();
});

for (const dialect of ['2025-11-25', 'ext-2026'] as const) {
  describe(`gateway in front of server-filesystem, requestor in ${dialect}`, () => {
    it('runs its tools as tasks, per the --tools policy', async () => {
      const client = await TaskClient.connect({ url: proxy.url }, { dialect });
      clients.push(client);
      const read = await client.callTool('read_text_file', { path: join(root, 'notes', 'hello.txt') });
      expect(read.isTask).toBe(true);
      expect(textOf(await read.result())).toContain('Hello from the filesystem server');
      const listing = await client.callTool('list_directory', { path: join(root, 'notes') });
      expect(textOf(await listing.result())).toContain('hello.txt');
      // A path outside the allowed root: the upstream's own refusal comes through.
      const outside = await (await client.callTool('read_text_file', { path: '/etc/hostname' })).outcome();
      expect(outside.status).toBe('failed');
      expect(outside.status === 'failed' && outside.message).toMatch(/denied|outside|not allowed/i);
    });
  });
}

it('declares execution.taskSupport per policy to 2025-11-25 requestors', async () => {
  const client = await TaskClient.connect({ url: proxy.url }, { dialect: '2025-11-25' });
  clients.push(client);
  const tools = await client.listTools();
  const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
  expect(support['read_text_file']).toBe('required');
  expect(support['list_directory']).toBe('optional');
  expect(support['write_file']).toBe('forbidden');
});
