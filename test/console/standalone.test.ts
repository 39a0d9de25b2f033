import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { ensureBuilt, startCli, type CliProcess } from '../cli/helpers/cli.js';
import { startEngine } from '../helpers/engines.js';
import { tempDir } from '../helpers/tmp.js';

/** `mcp-tasks console --store`: the console alone over a store other processes write, with a generated token. */
describe('mcp-tasks console', () => {
  let cli: CliProcess;
  let openUrl: string;
  let taskId: string;

  beforeAll(async () => {
    ensureBuilt();
    const path = join(tempDir(), 'tasks.db');
    const engine = await startEngine(new SqliteStore({ path }));
    const { task } = await engine.create({
      owner: 'principal:ops',
      request: { method: 'tools/call', params: { name: 'reindex', arguments: { shard: 7 } } },
      dialect: 'ext-tasks',
      run: false,
    });
    taskId = task.taskId;
    await engine.close();
    const env = { ...process.env } as Record<string, string>;
    delete env['MCP_TASKS_CONSOLE_TOKEN'];
    cli = startCli(['console', '--store', path, '--port', '0'], { env });
    await cli.waitFor((_out, err) => /open: (http:\S+)/.test(err));
    openUrl = (/open: (http:\S+)/.exec(cli.stderr()) as RegExpExecArray)[1] as string;
  });

  afterAll(async () => {
    cli?.child.kill('SIGINT');
    await cli?.done;
  });

  it('prints a ready URL with a generated token that becomes a cookie, and serves the store across owners', async () => {
    expect(cli.stderr()).toContain('over the sqlite store (token generated for this run)');
    const url = new URL(openUrl);
    const token = url.searchParams.get('token') as string;
    expect(token.length).toBeGreaterThanOrEqual(24);
    const exchange = await fetch(openUrl, { redirect: 'manual' });
    expect(exchange.status).toBe(303);
    expect(exchange.headers.get('location')).toBe('/console/');
    const cookie = exchange.headers.get('set-cookie') as string;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(token);
    const list = await fetch(`${url.origin}/console/api/tasks`, {
      headers: { cookie: cookie.split(';')[0] as string },
    });
    const body = (await list.json()) as { tasks: Array<{ taskId: string; owner: string; tool: string }> };
    expect(body.tasks).toEqual([expect.objectContaining({ taskId, owner: 'principal:ops', tool: 'reindex' })]);
    const page = await fetch(`${url.origin}/console/api/tasks/${taskId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await page.json()) as { timeline: Array<{ kind: string }> }).timeline[0]?.kind).toBe('created');
  });

  it('refuses a foreign Host or Origin as the MCP endpoint does', async () => {
    const url = new URL(openUrl);
    const token = url.searchParams.get('token') as string;
    const headers = { authorization: `Bearer ${token}` };
    const foreign = await fetch(`${url.origin}/console/api/tasks`, {
      headers: { ...headers, origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    const ok = await fetch(`${url.origin}/console/api/tasks`, { headers: { ...headers, origin: url.origin } });
    expect(ok.status).toBe(200);
  });
});
