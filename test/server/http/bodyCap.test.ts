import { request as httpRequest } from 'node:http';

import { McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createMcpTasks, serveHttp, type HttpServerHandle, type McpTasks } from '../../../src/server/index.js';

const MB = 1024 * 1024;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * POSTs `size` bytes in 64 KiB chunks without a Content-Length (chunked), as fast as the socket takes them, and
 * resolves with the answer; a reset connection rejects.
 */
export function postChunked(url: string, size: number): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.setTimeout(10_000, () => request.destroy(new Error('no answer in time')));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      request.end();
    };
    pump();
  });
}

describe('the HTTP body cap', () => {
  let tasks: McpTasks;
  let http: HttpServerHandle;
  const createServer = () => new McpServer({ name: 'body-cap', version: '1.0.0' });

  beforeAll(async () => {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory' });
    http = await serveHttp(tasks, createServer, { port: 0 });
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
