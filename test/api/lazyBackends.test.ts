import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { HttpPeer } from '../helpers/rawWire.js';
import { tempDir } from '../helpers/tmp.js';

const SERVER = fileURLToPath(new URL('./fixtures/lazyServer.mjs', import.meta.url));
const BACKENDS = ['pg', 'ioredis', 'bullmq', 'better-sqlite3', 'prom-client', 'hono', '@hono/node-server'];

/**
 * Runs a task server from the built package (imported by its name, as a user would) on `store`, talks MCP to it, and
 * returns the packages the process loaded, through the ESM loader or `require`.
 */
async function packagesLoaded(store: string, ...alsoImport: string[]): Promise<Set<string>> {
  const log = join(tempDir(), 'loads.log');
  const child = spawn(process.execPath, [SERVER, 'mcp-tasks', store, log, ...alsoImport], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`the server exited ${await exited}`);
  const { url } = JSON.parse(first.value) as { url: string };

  const peer = new HttpPeer(url);
  expect((await peer.initialize()).result?.['serverInfo']).toMatchObject({ name: 'lazy-backends' });
  const listed = await peer.request('tools/list');
  expect(listed.result?.['tools']).toEqual([expect.objectContaining({ name: 'echo' })]);
  await peer.close();

  child.stdin.end();
  const last = await lines.next();
  expect(await exited).toBe(0);
  const { commonjs } = JSON.parse(String(last.value)) as { commonjs: string[] };
  const paths = [...readFileSync(log, 'utf8').split('\n'), ...commonjs];
  const packages = new Set<string>();
  for (const path of paths) {
    const inPackage = path.split('/node_modules/').slice(1).at(-1);
    if (inPackage)
      packages.add(
        inPackage
          .split('/')
          .slice(0, inPackage.startsWith('@') ? 2 : 1)
          .join('/'),
      );
  }
  return packages;
}

describe('backends load lazily from the built package', () => {
  it('with the memory store, no database driver, queue client or metrics library is loaded', async () => {
    const loaded = await packagesLoaded('memory');
    expect(loaded).toContain('@modelcontextprotocol/server');
    expect(BACKENDS.filter((name) => loaded.has(name))).toEqual([]);
  });

  it('with a SQLite file, only better-sqlite3 is loaded of them', async () => {
    const loaded = await packagesLoaded(join(tempDir(), 'tasks.db'));
    expect(BACKENDS.filter((name) => loaded.has(name))).toEqual(['better-sqlite3']);
  });

  it('BullMQ loads with mcp-tasks/worker', async () => {
    const loaded = await packagesLoaded('memory', 'mcp-tasks/worker');
    expect(loaded).toContain('bullmq');
  });
});
