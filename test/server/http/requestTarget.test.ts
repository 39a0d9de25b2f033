import { request as httpRequest } from 'node:http';

import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../../src/server/index.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request: node:http sends the Host and the request-target exactly as given. */
function send(port: number, target: string, host: string, method = 'GET'): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: target, method, headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.setTimeout(3000, () => request.destroy(new Error('no answer in time')));
    request.on('error', reject);
    request.end();
  });
}

describe('routing by the request-target, never by the Host header', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  const createServer = () => new McpServer({ name: 'routing', version: '1.0.0' });

  beforeAll(async () => {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory', metrics: true });
    http = await serveHttp(tasks, {
      port: 0,
      metricsPath: '/metrics',
      console: { token: 'x'.repeat(24) },
    });
  });
  afterAll(async () => {
    await http.close();
    await tasks.close();
  });

  it('answers 400 to a Host that is not host[:port], whatever it names', async () => {
    const port = http.port;
    for (const host of [
      `127.0.0.1:${port}/metrics#`,
      `127.0.0.1:${port}/metrics?`,
      `127.0.0.1:${port}/console/api/tasks#`,
      `x@127.0.0.1:${port}`,
      `127.0.0.1:${port}:1`,
      'local host',
    ]) {
      const answer = await send(port, '/mcp', host);
      expect([host, answer.status]).toEqual([host, 400]);
      expect(JSON.parse(answer.body)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: 'Bad Request: the Host header must be host[:port] and the request-target a path',
        },
      });
      expect(answer.body).not.toContain('mcp_tasks');
    }
  });

  it('serves what the request-target names for a plain Host', async () => {
    const port = http.port;
    const metrics = await send(port, '/metrics', `127.0.0.1:${port}`);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('mcp_tasks_created_total');
    const mcp = await send(port, '/mcp', `127.0.0.1:${port}`);
    // GET without a session on the MCP path: 405, not the metrics.
    expect(mcp.status).toBe(405);
    expect((await send(port, '/metrics', 'localhost')).status).toBe(200);
    expect((await send(port, '/metrics', '[::1]')).status).toBe(200);
  });

  it('takes the path of an absolute-form target from the target itself', async () => {
    const port = http.port;
    const answer = await send(port, `http://127.0.0.1:${port}/mcp`, `127.0.0.1:${port}/metrics#`);
    expect(answer.status).toBe(400);
    const metrics = await send(port, `http://elsewhere.example/metrics`, `127.0.0.1:${port}`);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('mcp_tasks_created_total');
  });
});
