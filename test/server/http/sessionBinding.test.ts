import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../../src/server/index.js';

const TOKENS: Record<string, string> = { 'token-alice': 'alice', 'token-bob': 'bob' };
const UNKNOWN_SESSION = '3b241101-e2bb-4255-8caf-4136c566a962';
const NOT_FOUND = { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } };

interface Answer {
  status: number;
  body: string;
}

describe.each([
  ['fast path', true],
  ['SDK transport', false],
])('a session is used only by the principal that opened it (%s)', (_name, fastPath) => {
  let tasks: McpTasks | undefined;
  let http: HttpServerHandle | undefined;
  afterEach(async () => {
    await http?.close();
    await tasks?.close();
  });

  const createServer = () => new McpServer({ name: 'session-binding', version: '1.0.0' });

  async function start(): Promise<HttpServerHandle> {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory' });
    http = await serveHttp(tasks, {
      port: 0,
      fastPath,
      authenticate: (request) => {
        const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
        const sub = token === undefined ? undefined : TOKENS[token];
        return sub ? { token: token as string, clientId: 'app', scopes: [], extra: { sub } } : undefined;
      },
    });
    return http;
  }

  const headers = (token: string | undefined, sessionId: string, extra: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': sessionId,
    'mcp-protocol-version': '2025-11-25',
    ...(token !== undefined && { authorization: `Bearer ${token}` }),
    ...extra,
  });

  /** Reads a JSON answer whole, or the first moment of a stream (which a refused request never opens). */
  async function exchange(url: string, init: RequestInit): Promise<Answer> {
    const controller = new AbortController();
    const response = await fetch(url, { ...init, signal: controller.signal });
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      controller.abort();
      return { status: response.status, body: '(stream)' };
    }
    return { status: response.status, body: await response.text() };
  }

  const post = (url: string, token: string | undefined, sessionId: string, method: string, id = 1) =>
    exchange(url, {
      method: 'POST',
      headers: headers(token, sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params: {} }),
    });

  async function openSession(url: string, token: string): Promise<string> {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'binding', version: '1' } },
      }),
    });
    await response.text();
    const sessionId = response.headers.get('mcp-session-id');
    expect(sessionId).toBeTruthy();
    await fetch(url, {
      method: 'POST',
      headers: headers(token, sessionId as string),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    }).then((r) => r.text());
    return sessionId as string;
  }

  it("answers another principal's POST, GET and DELETE on a session exactly as an unknown session", async () => {
    const { url } = await start();
    const session = await openSession(url, 'token-alice');
    const unknown = await post(url, 'token-bob', UNKNOWN_SESSION, 'tasks/list');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual(NOT_FOUND);
    for (const token of ['token-bob', undefined]) {
      // Task traffic (the fast path's own), a plain request (forwarded on the fast path) and one only the SDK answers.
      for (const method of ['tasks/list', 'ping', 'resources/list'])
        expect([token, method, await post(url, token, session, method)]).toEqual([token, method, unknown]);
      const stream = await exchange(url, { method: 'GET', headers: headers(token, session) });
      expect([token, 'GET', stream]).toEqual([token, 'GET', unknown]);
      const resume = await exchange(url, {
        method: 'GET',
        headers: headers(token, session, { 'last-event-id': 'anything' }),
      });
      expect([token, 'resume', resume]).toEqual([token, 'resume', unknown]);
      const closed = await exchange(url, { method: 'DELETE', headers: headers(token, session) });
      expect([token, 'DELETE', closed]).toEqual([token, 'DELETE', unknown]);
    }
    // Alice's session is still open and hers.
    const ping = await post(url, 'token-alice', session, 'ping', 7);
    expect(ping.status).toBe(200);
    expect(http?.handler.sessionCount).toBe(1);
    const closed = await exchange(url, { method: 'DELETE', headers: headers('token-alice', session) });
    expect(closed.status).toBe(200);
    expect(http?.handler.sessionCount).toBe(0);
  });

  it('keeps an anonymous session from an authenticated caller', async () => {
    const { url } = await start();
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'binding', version: '1' } },
      }),
    });
    await response.text();
    const session = response.headers.get('mcp-session-id') as string;
    const refused = await post(url, 'token-bob', session, 'tasks/list');
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.body)).toEqual(NOT_FOUND);
    expect((await post(url, undefined, session, 'ping')).status).toBe(200);
  });
});
