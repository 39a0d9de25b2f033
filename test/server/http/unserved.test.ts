import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../../src/server/index.js';
import { HttpPeer } from '../../helpers/rawWire.js';

function createServer(): McpServer {
  return new McpServer({ name: 'unserved', version: '1.0.0' });
}

/** Every answer must come at once: a hung request fails the test instead of waiting for the suite's timeout. */
function send(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(3000) });
}

describe('requests the HTTP endpoint does not serve are answered at once', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  beforeAll(async () => {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory', metrics: true });
    http = await serveHttp(tasks, { port: 0, metricsPath: '/metrics' });
  });
  afterAll(async () => {
    await http.close();
    await tasks.close();
  });

  it.each([
    ['2025-era', '2025-11-25'],
    ['2026-07-28', '2026-07-28'],
  ])('GET and DELETE without a session are 405 with Allow: POST (%s)', async (_label, version) => {
    for (const method of ['GET', 'DELETE']) {
      const response = await send(http.url, {
        method,
        headers: { accept: 'text/event-stream', 'mcp-protocol-version': version },
      });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      const body = (await response.json()) as { error: { code: number; message: string } };
      expect(body.error.code).toBe(-32000);
      expect(body.error.message).toContain('Mcp-Session-Id');
    }
  });

  it('answers PUT, PATCH, OPTIONS and HEAD on the MCP path with 405 and Allow: GET, POST, DELETE', async () => {
    for (const method of ['PUT', 'PATCH', 'OPTIONS', 'HEAD']) {
      const response = await send(http.url, { method, headers: { 'content-type': 'application/json' } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow'), method).toBe('GET, POST, DELETE');
      await response.arrayBuffer();
    }
  });

  it('answers every method on an unknown path with 404', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE']) {
      const response = await send(http.url.replace('/mcp', '/elsewhere'), { method });
      expect(response.status, method).toBe(404);
      await response.arrayBuffer();
    }
    const nested = await send(`${http.url}/deeper`);
    expect(nested.status).toBe(404);
    await nested.arrayBuffer();
  });

  it('serves GET on /metrics only', async () => {
    const metrics = http.url.replace('/mcp', '/metrics');
    expect((await send(metrics)).status).toBe(200);
    const post = await send(metrics, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    await post.arrayBuffer();
  });

  it('inside a session: GET opens the stream at once, an unknown session is 404, DELETE ends the session', async () => {
    const peer = new HttpPeer(http.url);
    await peer.initialize();
    const headers = {
      accept: 'text/event-stream',
      'mcp-session-id': peer.sessionId as string,
      'mcp-protocol-version': '2025-11-25',
    };
    // The stream carries no event yet: its headers must still arrive at once.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 3000);
    const stream = await fetch(http.url, { headers, signal: controller.signal });
    clearTimeout(timer);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    controller.abort();

    const unknown = await send(http.url, { headers: { ...headers, 'mcp-session-id': 'no-such-session' } });
    expect(unknown.status).toBe(404);
    await unknown.arrayBuffer();

    const sessions = http.handler.sessionCount;
    const deleted = await send(http.url, { method: 'DELETE', headers });
    expect(deleted.status).toBe(200);
    await deleted.arrayBuffer();
    expect(http.handler.sessionCount).toBe(sessions - 1);
    const after = await send(http.url, { headers });
    expect(after.status).toBe(404);
    await after.arrayBuffer();
    await peer.close();
  });
});
