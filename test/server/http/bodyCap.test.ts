import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../../src/server/index.js';
import { postChunked } from '../../helpers/postChunked.js';

const MB = 1024 * 1024;

describe('the HTTP body cap', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  const createServer = () => new McpServer({ name: 'body-cap', version: '1.0.0' });

  beforeAll(async () => {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory' });
    http = await serveHttp(tasks, { port: 0 });
  });
  afterAll(async () => {
    await http.close();
    await tasks.close();
  });

  it('answers a chunked body over the cap 413 with the JSON-RPC error, as a Content-Length over it', async () => {
    for (let i = 0; i < 3; i++) {
      const answer = await postChunked(http.url, 5 * MB);
      expect(answer.status).toBe(413);
      expect(answer.headers['connection']).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: 'Payload Too Large: Request body must not exceed 4194304 bytes' },
      });
    }
  });

  it('still serves the next request', async () => {
    const response = await fetch(http.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBeLessThan(500);
    await response.body?.cancel();
  });
});
