import { request as httpRequest } from 'node:http';

import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';

import {
  createMcpTasks,
  serveHttp,
  type HttpServerHandle,
  type McpTasks,
  type RateLimit,
  type ServeHttpOptions,
} from '../../../src/server/index.js';

function createServer(): McpServer {
  return new McpServer({ name: 'guarded', version: '1.0.0' });
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http, so the test controls every header, Host included. Streams are read for a moment, then dropped. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      const done = () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body });
      response.on('end', done);
      if (response.headers['content-type']?.startsWith('text/event-stream'))
        setTimeout(() => {
          done();
          request.destroy();
        }, 300);
    });
    request.setTimeout(3000, () => request.destroy(new Error('no answer in time')));
    request.on('error', reject);
    request.end(options.body);
  });
}

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'guard-test', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

function listenBody(taskIds: string[]): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id: 'listen-1',
    method: 'subscriptions/listen',
    params: { notifications: { taskIds }, _meta: MODERN_META },
  });
}

const LISTEN_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'subscriptions/listen',
};

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'guard-test', version: '1' } },
});
const POST_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('Origin and Host checks on every path; subscriptions/listen validated like everything else', () => {
  let tasks: McpTasks | undefined;
  let http: HttpServerHandle | undefined;
  afterEach(async () => {
    await http?.close();
    await tasks?.close();
    http = undefined;
    tasks = undefined;
  });

  async function start(options: ServeHttpOptions = {}, rateLimit?: RateLimit) {
    tasks = await createMcpTasks({
      server: createServer,
      tools: {},
      store: 'memory',
      metrics: true,
      ...(rateLimit && { rateLimit }),
    });
    http = await serveHttp(tasks, { port: 0, metricsPath: '/metrics', ...options });
    return {
      mcp: http.url,
      metrics: http.url.replace('/mcp', '/metrics'),
      other: http.url.replace('/mcp', '/other'),
    };
  }

  it('refuses a foreign or null Origin with 403 on the MCP path, listen, /metrics and unknown paths', async () => {
    const urls = await start();
    for (const origin of ['http://evil.com', 'null', 'https://localhost.evil.com']) {
      const headers = { origin };
      const answers = [
        await send(urls.mcp, { method: 'POST', headers: { ...POST_HEADERS, ...headers }, body: INITIALIZE }),
        await send(urls.mcp, { method: 'POST', headers: { ...LISTEN_HEADERS, ...headers }, body: listenBody([]) }),
        await send(urls.mcp, { headers: { ...headers, accept: 'text/event-stream' } }),
        await send(urls.metrics, { headers }),
        await send(urls.other, { headers }),
      ];
      for (const answer of answers) {
        expect(answer.status, origin).toBe(403);
        expect((JSON.parse(answer.body) as { error: { code: number; message: string } }).error).toMatchObject({
          code: -32000,
          message: expect.stringMatching(/Invalid Origin/),
        });
      }
    }
    // Local pages and clients that send no Origin (every non-browser client) are served.
    const local = await send(urls.mcp, {
      method: 'POST',
      headers: { ...POST_HEADERS, origin: 'http://localhost:5173' },
      body: INITIALIZE,
    });
    expect(local.status).toBe(200);
    expect((await send(urls.metrics)).status).toBe(200);
    expect((await send(urls.metrics, { headers: { origin: 'http://127.0.0.1:8080' } })).status).toBe(200);
  });

  it('refuses a foreign Host with 403 on every path, /metrics included', async () => {
    const urls = await start();
    const headers = { host: 'evil.com' };
    for (const answer of [
      await send(urls.mcp, { method: 'POST', headers: { ...POST_HEADERS, ...headers }, body: INITIALIZE }),
      await send(urls.mcp, { method: 'POST', headers: { ...LISTEN_HEADERS, ...headers }, body: listenBody([]) }),
      await send(urls.metrics, { headers }),
      await send(urls.other, { headers }),
    ]) {
      expect(answer.status).toBe(403);
      expect(answer.body).toContain('Invalid Host');
    }
  });

  it('takes configured allow-lists for Host and Origin', async () => {
    const urls = await start({
      allowedHostnames: ['127.0.0.1', 'mcp.example.com'],
      allowedOrigins: ['app.example.com'],
    });
    const asked = (headers: Record<string, string>) =>
      send(urls.mcp, { method: 'POST', headers: { ...POST_HEADERS, ...headers }, body: INITIALIZE });
    expect((await asked({ host: 'mcp.example.com', origin: 'https://app.example.com' })).status).toBe(200);
    expect((await asked({ origin: 'https://app.example.com' })).status).toBe(200);
    // Once a list is given, only it counts: localhost pages are foreign now.
    expect((await asked({ origin: 'http://localhost:3000' })).status).toBe(403);
    expect((await asked({ host: 'localhost' })).status).toBe(403);
  });

  it('listen: a wrong media type is 415, headers that disagree with the body are -32020, as for any request', async () => {
    const urls = await start();
    const plain = await send(urls.mcp, {
      method: 'POST',
      headers: { ...LISTEN_HEADERS, 'content-type': 'text/plain' },
      body: listenBody([]),
    });
    expect(plain.status).toBe(415);
    const mismatched = await send(urls.mcp, {
      method: 'POST',
      headers: { ...LISTEN_HEADERS, 'mcp-method': 'tools/list' },
      body: listenBody([]),
    });
    expect((JSON.parse(mismatched.body) as { error: { code: number } }).error.code).toBe(-32020);
    const served = await send(urls.mcp, { method: 'POST', headers: LISTEN_HEADERS, body: listenBody(['unknown']) });
    expect(served.status).toBe(200);
    expect(served.body).toContain('"taskIds":[]');
  });

  it('listen: more task ids than the cap is -32602 at once; the cap is configurable', async () => {
    const urls = await start({ maxListenTaskIds: 10 });
    const ids = Array.from({ length: 11 }, (_, i) => `task-${i}`);
    const refused = await send(urls.mcp, { method: 'POST', headers: LISTEN_HEADERS, body: listenBody(ids) });
    expect(JSON.parse(refused.body)).toMatchObject({
      id: 'listen-1',
      error: { code: -32602, message: expect.stringContaining('at most 10') },
    });
    const accepted = await send(urls.mcp, { method: 'POST', headers: LISTEN_HEADERS, body: listenBody(ids.slice(1)) });
    expect(accepted.status).toBe(200);
    expect(accepted.headers['content-type']).toMatch(/^text\/event-stream/);
  });

  it('listen: 90,000 task ids are refused under the default cap, before any is looked up', async () => {
    const urls = await start();
    const ids = Array.from({ length: 90_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const refused = await send(urls.mcp, { method: 'POST', headers: LISTEN_HEADERS, body: listenBody(ids) });
    expect((JSON.parse(refused.body) as { error: { code: number } }).error.code).toBe(-32602);
  });

  it('listen: counts against the caller’s rate limit and goes through authentication', async () => {
    const urls = await start(
      {
        authenticate: (request) =>
          request.headers.get('authorization') === 'Bearer good'
            ? { token: 'good', clientId: 'alice', scopes: [] }
            : new Response('unauthorized', { status: 401 }),
      },
      // A listen is a blocking wait: it is charged once against the waits quota.
      { perSecond: 1000, burst: 1000, waits: { perSecond: 0.001, burst: 2 } },
    );
    const headers = { ...LISTEN_HEADERS, authorization: 'Bearer good' };
    expect((await send(urls.mcp, { method: 'POST', headers: LISTEN_HEADERS, body: listenBody([]) })).status).toBe(401);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await send(urls.mcp, { method: 'POST', headers, body: listenBody([]) }));
    expect(answers.slice(0, 2).map((a) => a.status)).toEqual([200, 200]);
    expect(JSON.parse(answers[2]?.body ?? '')).toMatchObject({
      id: 'listen-1',
      error: { code: -32600, data: { limit: 'rate' } },
    });
  });
});
