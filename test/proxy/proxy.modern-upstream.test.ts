import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf, type TaskSnapshot } from '../../src/client/index.js';
import { HttpFixture } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';
import { startProxyProcess, storedTask, type ProxyProcess } from './helpers/proxyProcess.js';

/**
 * Any generation in front of any generation behind: the project's fixture server (examples/conformance, which serves
 * all three) as the upstream, spoken to in 2025-11-25, the 2026 extension (negotiated) and SEP-1686 (named with
 * --upstream-dialect), each behind its own gateway, driven by requestors of all three generations. Its tools run as
 * the upstream's own tasks, followed by the gateway's tasks, questions included.
 */
const UPSTREAMS = [
  // The fixture offers 2026-07-28 first: `auto` negotiates the extension.
  { behind: 'ext-2026', dialect: 'auto', env: {} },
  { behind: '2025-11-25', dialect: '2025-11-25', env: {} },
  // SEP-1686's client-chosen ids need an owner scope on the fixture: without authentication, the session.
  { behind: 'sep-1686', dialect: 'sep-1686', env: { MCP_TASKS_BIND_TO_SESSION: '1' } },
] as const;
const REQUESTORS = ['2025-11-25', 'ext-2026', 'sep-1686'] as const;

const dir = tempDir('mcp-tasks-gateway-modern-');
const config = join(dir, 'proxy.json');
const fixtures: HttpFixture[] = [];
const proxies = new Map<string, { proxy: ProxyProcess; db: string }>();
const clients: TaskClient[] = [];

beforeAll(async () => {
  writeFileSync(config, JSON.stringify({ bindToSession: true }));
  for (const upstream of UPSTREAMS) {
    const fixture = await HttpFixture.start({ env: upstream.env });
    fixtures.push(fixture);
    const db = join(dir, `${upstream.behind}.db`);
    const proxy = await startProxyProcess([
      '--store',
      db,
      '--config',
      config,
      '--upstream',
      fixture.url,
      '--upstream-dialect',
      upstream.dialect,
    ]);
    proxies.set(upstream.behind, { proxy, db });
  }
});

afterAll(async () => {
  for (const client of clients) await client.close();
  for (const { proxy } of proxies.values()) await proxy.stop();
  for (const fixture of fixtures) await fixture.close();
});

/** The upstream task the gateway's task followed, as stored on it. */
const upstreamTaskOf = (db: string, taskId: string) => storedTask(db, taskId)?.meta['upstreamTask'];

for (const { behind } of UPSTREAMS) {
  for (const dialect of REQUESTORS) {
    describe(`gateway, requestor in ${dialect}, fixture upstream in ${behind}`, () => {
      const connect = async () => {
        const { proxy } = proxies.get(behind) as { proxy: ProxyProcess };
        const client = await TaskClient.connect(
          { url: proxy.url },
          {
            dialect,
            elicitation: (params) => ({
              action: 'accept',
              content: { confirm: String(params.message).includes('yes-') },
            }),
          },
        );
        clients.push(client);
        return client;
      };

      it("follows the upstream's own task to its result", async () => {
        const client = await connect();
        const seen: TaskSnapshot[] = [];
        const handle = await client.callTool('generate_report', { pages: 3 });
        handle.onUpdate((snapshot) => seen.push(snapshot));
        expect(await handle.accepted()).toBe(true);
        expect(textOf(await handle.result())).toBe('Report ready: 3 pages');
        const ref = upstreamTaskOf(proxies.get(behind)?.db as string, handle.taskId as string);
        expect(ref).toMatchObject({ taskId: expect.any(String) });
      });

      it("carries the upstream task's question to the requestor and its answer back", async () => {
        const client = await connect();
        const kept = await client.callTool('confirm_delete', { filename: 'no-keep.txt' });
        const deleted = await client.callTool('confirm_delete', { filename: 'yes-remove.txt' });
        expect(await deleted.accepted()).toBe(true);
        expect(textOf(await kept.result())).toBe('Kept no-keep.txt (accept)');
        expect(textOf(await deleted.result())).toBe('Deleted yes-remove.txt');
        const ref = upstreamTaskOf(proxies.get(behind)?.db as string, deleted.taskId as string);
        expect(ref).toMatchObject({ taskId: expect.any(String) });
      });
    });
  }
}
