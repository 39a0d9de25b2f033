import { request as httpRequest } from 'node:http';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SqliteStore } from '../../src/stores/sqlite/index.js';
import { ensureBuilt, runCli, startCli, type CliProcess } from '../cli/helpers/cli.js';
import { postChunked } from '../helpers/postChunked.js';
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

  it('answers a body over 64 KiB 413, announced or chunked, and the client receives it', async () => {
    const url = new URL(openUrl);
    const token = url.searchParams.get('token') as string;
    const cancel = `${url.origin}/console/api/tasks/${taskId}/cancel`;
    const announced = await fetch(cancel, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-console-request': '1' },
      body: 'x'.repeat(100 * 1024),
    });
    expect(announced.status).toBe(413);
    expect(await announced.text()).toBe('Payload Too Large: the console takes at most 65536 bytes');
    const chunked = await postChunked(cancel, 1024 * 1024, { authorization: `Bearer ${token}` });
    expect(chunked.status).toBe(413);
    expect(chunked.body).toBe('Payload Too Large: the console takes at most 65536 bytes');
    // Nothing was cancelled, and the console still answers.
    const task = await fetch(`${url.origin}/console/api/tasks/${taskId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await task.json()) as { task: { status: string } }).task.status).toBe('working');
  });

  it('routes by the request-target and answers 400 to a Host that is not host[:port]', async () => {
    const url = new URL(openUrl);
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          { host: '127.0.0.1', port: Number(url.port), path: '/elsewhere', headers: { host } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        request.end();
      });
    expect(await status(`127.0.0.1:${url.port}/console/api/session#`)).toBe(400);
    expect(await status(`127.0.0.1:${url.port}`)).toBe(404);
  });

  it('refuses to start with a token shorter than 16 characters', async () => {
    const run = await runCli(['console', '--store', join(tempDir(), 'short.db'), '--port', '0'], {
      env: { MCP_TASKS_CONSOLE_TOKEN: 'too-short' },
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('the console token is 9 characters long; it must have at least 16');
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
  it("passes an action's JSON body on: an answer is read and checked against the task", async () => {
    const url = new URL(openUrl);
    const headers = { authorization: `Bearer ${url.searchParams.get('token')}`, 'x-console-request': '1' };
    const answer = `${url.origin}/console/api/tasks/${taskId}/answer`;
    const body = JSON.stringify({ key: 'input-9', action: 'accept', content: {} });
    const read = await fetch(answer, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    });
    expect(read.status).toBe(409);
    expect(await read.json()).toEqual({ error: 'the question is no longer waiting for an answer' });
    // Only JSON: a foreign form's text/plain body is refused before it is read.
    const form = await fetch(answer, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body });
    expect(form.status).toBe(415);
  });

  it('still takes a cancel whose body is small (the last test: the task ends)', async () => {
    const url = new URL(openUrl);
    const token = url.searchParams.get('token') as string;
    const cancel = await fetch(`${url.origin}/console/api/tasks/${taskId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-console-request': '1', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(cancel.status).toBe(200);
    expect(((await cancel.json()) as { task: { status: string } }).task.status).toBe('cancelled');
  });
});
