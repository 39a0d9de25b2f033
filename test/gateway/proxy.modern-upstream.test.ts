import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TaskClient, textOf, type TaskSnapshot } from '../../src/client/index.js';
import { HttpFixture } from '../helpers/rawWire.js';
import { startProxyProcess, type ProxyProcess } from './helpers/proxyProcess.js';

/**
 * A 2026-07-28 upstream that serves the tasks extension (the project's fixture server) behind the gateway: its
 * task-only tool runs as its own server-directed task, followed by the gateway's task, for requestors of every
 * generation.
 */
let fixture: HttpFixture;
let proxy: ProxyProcess;
const clients: TaskClient[] = [];

beforeAll(async () => {
  fixture = await HttpFixture.start();
  proxy = await startProxyProcess(['--store', 'memory', '--upstream', fixture.url]);
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await proxy?.stop();
  await fixture?.close();
});

for (const dialect of ['2025-11-25', 'ext-2026'] as const) {
  describe(`gateway in front of a 2026-07-28 tasks-extension upstream, requestor in ${dialect}`, () => {
    it("follows the upstream's server-directed task of a task-only tool", async () => {
      const client = await TaskClient.connect({ url: proxy.url }, { dialect });
      clients.push(client);
      const seen: TaskSnapshot[] = [];
      const handle = await client.callTool('generate_report', { pages: 3 });
      handle.onUpdate((snapshot) => seen.push(snapshot));
      expect(handle.isTask).toBe(true);
      expect(textOf(await handle.result())).toBe('Report ready: 3 pages');
    });
  });
}
