import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';

import { FailureThrottle } from '../../src/console/FailureThrottle.js';
import {
  createMcpTasks,
  serveHttp,
  type HttpServerHandle,
  type McpTasks,
  type ServeHttpOptions,
} from '../../src/server/index.js';

const ADMIN = 'admin-token-of-the-hardening-tests';
const READONLY = 'readonly-token-of-the-hardening-tests';

describe('console hardening (served by serveHttp)', () => {
  let tasks: McpTasks | undefined;
  let http: HttpServerHandle | undefined;
  const streams: AbortController[] = [];
  // Open responses are held: fetch cancels the body of a response that is garbage-collected, which would free a
  // stream's place behind the test's back.
  const held: Response[] = [];
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.abort();
    held.length = 0;
    await http?.close();
    await tasks?.close();
    http = undefined;
    tasks = undefined;
  });

  const createServer = () => new McpServer({ name: 'console-hardening', version: '1.0.0' });

  async function start(consoleOptions: ServeHttpOptions['console'] = {}): Promise<string> {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory' });
    http = await serveHttp(tasks, {
      port: 0,
      console: { token: ADMIN, readonlyToken: READONLY, ...consoleOptions },
    });
    return `http://127.0.0.1:${http.port}/console`;
  }

  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  /** Opens a live stream and reports its status; an open one stays open until the test ends. */
  async function openStream(base: string, token: string): Promise<number> {
    const controller = new AbortController();
    streams.push(controller);
    const response = await fetch(`${base}/api/stream`, { headers: as(token), signal: controller.signal });
    if (response.status !== 200) await response.text();
    else held.push(response);
    return response.status;
  }

  it('answers a malformed percent-encoded task id 404, as a missing task, never 500', async () => {
    const base = await start();
    for (const id of ['%E0%A4%A', '%', '%zz', '%C0%80x'])
      for (const suffix of ['', '/cancel']) {
        const response = await fetch(`${base}/api/tasks/${id}${suffix}`, {
          method: suffix ? 'POST' : 'GET',
          headers: { ...as(ADMIN), 'x-console-request': '1' },
        });
        expect([id, suffix, response.status]).toEqual([id, suffix, 404]);
        expect(await response.json()).toEqual({ error: 'no such task' });
      }
  });

  it('keeps half of the live streams for the admin, whatever the read-only token holds', async () => {
    const base = await start({ maxStreams: 4 });
    const readonly = [];
    for (let i = 0; i < 4; i++) readonly.push(await openStream(base, READONLY));
    expect(readonly).toEqual([200, 200, 503, 503]);
    expect([await openStream(base, ADMIN), await openStream(base, ADMIN)]).toEqual([200, 200]);
    // All four taken now: the admin's next one waits like anyone's.
    expect(await openStream(base, ADMIN)).toBe(503);
    // A read-only stream that closes gives its place back to the read-only token.
    streams[0]?.abort();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await openStream(base, READONLY)).toBe(200);
  });

  it('answers 429 with Retry-After to an address past its failed logins, and counts only wrong credentials', async () => {
    const base = await start({ failedLogins: { max: 3, windowMs: 60_000 } });
    // No credential at all (a first visit) is not a failure.
    for (let i = 0; i < 5; i++) expect((await fetch(`${base}/api/session`)).status).toBe(401);
    expect((await fetch(`${base}/api/session`, { headers: as('wrong-token-number-one') })).status).toBe(401);
    expect((await fetch(`${base}/?token=wrong-token-number-two`, { redirect: 'manual' })).status).toBe(401);
    const forged = await fetch(`${base}/api/session`, { headers: { cookie: 'mcp_tasks_console=admin.forged' } });
    expect(forged.status).toBe(401);
    // Three failures: even the right token now waits.
    const throttled = await fetch(`${base}/api/session`, { headers: as(ADMIN) });
    expect(throttled.status).toBe(429);
    const retryAfter = Number(throttled.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await throttled.text()).toBe('Too many failed logins; try again later');
  });

  it('lets the right token in once the window is over', async () => {
    const base = await start({ failedLogins: { max: 1, windowMs: 300 } });
    expect((await fetch(`${base}/api/session`, { headers: as('wrong-token-number-one') })).status).toBe(401);
    expect((await fetch(`${base}/api/session`, { headers: as(ADMIN) })).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await fetch(`${base}/api/session`, { headers: as(ADMIN) })).status).toBe(200);
  });

  it('refuses to start with a configured token shorter than 16 characters', async () => {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory' });
    for (const console of [{ token: 'fifteen-chars!!' }, { token: ADMIN, readonlyToken: 'short' }])
      await expect(serveHttp(tasks, { port: 0, console })).rejects.toThrow(
        /console (read-only )?token is \d+ characters long; it must have at least 16/,
      );
    // Sixteen is enough.
    http = await serveHttp(tasks, { port: 0, console: { token: 'sixteen-chars!!!' } });
    expect(http.console?.token).toBe('sixteen-chars!!!');
  });
});

describe('FailureThrottle', () => {
  it('remembers at most maxAddresses addresses, forgetting the oldest', () => {
    const throttle = new FailureThrottle({ maxFailures: 1, maxAddresses: 3 });
    for (let i = 0; i < 1000; i++) throttle.fail(`10.0.${i >> 8}.${i & 255}`);
    expect(throttle.size).toBe(3);
    expect(throttle.retryAfter('10.0.3.231')).toBeGreaterThan(0);
    expect(throttle.retryAfter('10.0.0.0')).toBeUndefined();
  });
});
