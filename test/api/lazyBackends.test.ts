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

/** The packages a task server loaded (see `loads`). */
async function packagesLoaded(store: string, ...alsoImport: string[]): Promise<Set<string>> {
  return (await loads(store, ...alsoImport)).packages;
}

/**
 * Runs a task server from the built package (imported by its name, as a user would) on `store`, talks MCP to it, and
 * returns the packages the process loaded, through the ESM loader or `require`, and the package's own modules it
 * loaded (paths under dist/src/).
 */
async function loads(store: string, ...alsoImport: string[]): Promise<{ packages: Set<string>; ours: string[] }> {
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
  const ours = paths.filter((path) => path.includes('/dist/src/')).map((path) => path.split('/dist/src/')[1] as string);
  return { packages, ours };
}

describe('backends load lazily from the built package', () => {
  it('with the memory store, no database driver, queue client, metrics library or console is loaded', async () => {
    const { packages: loaded, ours } = await loads('memory');
    expect(loaded).toContain('@modelcontextprotocol/server');
    expect(BACKENDS.filter((name) => loaded.has(name))).toEqual([]);
    // serveHttp without `console` leaves the operator console unloaded.
    expect(ours).toContain('server/http/serveHttp.js');
    expect(ours.filter((module) => module.startsWith('console/'))).toEqual([]);
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
