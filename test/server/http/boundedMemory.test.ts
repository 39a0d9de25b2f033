import { request as httpRequest } from 'node:http';

import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';

import {
  createMcpTasks,
  serveHttp,
  type HttpServerHandle,
  type McpTasks,
  type ServeHttpOptions,
} from '../../../src/server/index.js';
import { HttpPeer } from '../../helpers/rawWire.js';

const MB = 1024 * 1024;

function createServer(): McpServer {
  const server = new McpServer({ name: 'bounded', version: '1.0.0' });
  server.registerTool('big', { inputSchema: z.object({ size: z.number() }) }, async ({ size }) => ({
    content: [{ type: 'text', text: 'x'.repeat(size) }],
  }));
  server.registerTool('wait', { inputSchema: z.object({ ms: z.number() }) }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: 'text', text: 'waited' }] };
  });
  server.registerTool(
    'flood',
    { inputSchema: z.object({ count: z.number(), size: z.number() }) },
    async ({ count, size }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken ?? 'none';
      // Paced, so a client that reads keeps up; one that does not falls behind.
      for (let i = 0; i < count; i++) {
        if (i % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: count, message: 'y'.repeat(size) },
        });
      }
      return { content: [{ type: 'text', text: 'flooded' }] };
    },
  );
  return server;
}

const TOKENS: Record<string, string> = { 'token-a': 'alice', 'token-b': 'bob', 'token-c': 'carol' };

describe('bounded memory on the HTTP endpoint', () => {
  let tasks: McpTasks | undefined;
  let http: HttpServerHandle | undefined;
  afterEach(async () => {
    await http?.close();
    await tasks?.close();
    http = undefined;
    tasks = undefined;
  });

  async function start(options: ServeHttpOptions = {}): Promise<HttpServerHandle> {
    tasks = await createMcpTasks({ server: createServer, tools: {}, store: 'memory' });
    http = await serveHttp(tasks, {
      port: 0,
      authenticate: (request) => {
        const token = request.headers.get('authorization')?.replace(/^Bearer /, '');
        const clientId = token === undefined ? undefined : TOKENS[token];
        return clientId ? { token: token as string, clientId, scopes: [] } : undefined;
      },
      ...options,
    });
    return http;
  }

  /** The HTTP status a ping in the peer's session gets (404 once the session is gone). */
  async function pingStatus(peer: HttpPeer): Promise<number> {
    const response = await fetch((http as HttpServerHandle).url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': peer.sessionId as string,
        'mcp-protocol-version': '2025-11-25',
        ...peer.headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'ping', method: 'ping' }),
    });
    await response.arrayBuffer();
    return response.status;
  }

  async function session(token?: string): Promise<HttpPeer> {
    const peer = new HttpPeer((http as HttpServerHandle).url, token ? { authorization: `Bearer ${token}` } : {});
    await peer.initialize();
    return peer;
  }

  it('event store: 40 answers of 1 MB stay under the per-session cap; answered streams are pruned after retention', async () => {
    const server = await start({ eventStore: { maxBytesPerSession: 4 * MB, answeredRetentionMs: 300 } });
    const peer = await session();
    for (let i = 0; i < 40; i++) {
      const answer = await peer.request('tools/call', { name: 'big', arguments: { size: MB } });
      expect((answer.result?.['content'] as Array<{ text: string }>)[0]?.text.length).toBe(MB);
      expect(server.handler.eventStoreBytes).toBeLessThanOrEqual(4 * MB + 64 * 1024);
    }
    expect(server.handler.eventStoreBytes).toBeGreaterThan(MB);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await peer.request('tools/call', { name: 'big', arguments: { size: 10 } });
    // Only the stream just answered is left.
    expect(server.handler.eventStoreBytes).toBeLessThan(4096);
    await peer.close();
  });

  it('event store: the total over all sessions is capped, the largest session paying first', async () => {
    const server = await start({ eventStore: { maxBytes: 3 * MB, maxBytesPerSession: 2 * MB } });
    const peers = [await session(), await session(), await session()];
    for (let round = 0; round < 3; round++)
      for (const peer of peers) {
        await peer.request('tools/call', { name: 'big', arguments: { size: MB / 2 } });
        expect(server.handler.eventStoreBytes).toBeLessThanOrEqual(3 * MB + 64 * 1024);
      }
    // Closing a session releases what its store held.
    const before = server.handler.eventStoreBytes;
    await (peers[0] as HttpPeer).close();
    const deleted = await fetch(server.url, {
      method: 'DELETE',
      headers: { 'mcp-session-id': (peers[0] as HttpPeer).sessionId as string, 'mcp-protocol-version': '2025-11-25' },
    });
    expect(deleted.status).toBe(200);
    expect(server.handler.eventStoreBytes).toBeLessThan(before);
    for (const peer of peers) await peer.close();
  });

  it('sessions: a client at its cap loses its own oldest idle session; the global cap refuses with 503 and Retry-After', async () => {
    const server = await start({ maxSessions: 5, maxSessionsPerClient: 3 });
    const anonymous = [await session(), await session(), await session()];
    const fourth = await session();
    expect(server.handler.sessionCount).toBe(3);
    // The oldest is gone, the newest three work.
    expect(await pingStatus(anonymous[0] as HttpPeer)).toBe(404);
    for (const peer of [...anonymous.slice(1), fourth]) expect(await pingStatus(peer)).toBe(200);
    const alice = [await session('token-a'), await session('token-a')];
    expect(server.handler.sessionCount).toBe(5);
    const refused = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer token-b',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bob', version: '1' } },
      }),
    });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('Too many sessions');
    // Stateless requests (no session) are still served at the global cap.
    const stateless = new HttpPeer(server.url, { authorization: 'Bearer token-b' });
    expect((await stateless.request('tools/call', { name: 'big', arguments: { size: 3 } })).result).toBeDefined();
    for (const peer of [...anonymous, fourth, ...alice, stateless]) await peer.close();
  });

  it('sessions: a session waiting on a request is neither evicted nor closed idle; an idle one is closed', async () => {
    const server = await start({ maxSessionsPerClient: 1, sessionIdleMs: 500 });
    const busy = await session('token-a');
    const waiting = busy.request('tools/call', { name: 'wait', arguments: { ms: 2500 } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // alice is at her cap with her only session busy: refused rather than cut.
    const second = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: 'Bearer token-a',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'alice', version: '1' } },
      }),
    });
    expect(second.status).toBe(503);
    await second.arrayBuffer();
    const idle = await session('token-b');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await pingStatus(idle)).toBe(404);
    expect((await waiting).result?.['content']).toEqual([{ type: 'text', text: 'waited' }]);
    expect(await pingStatus(busy)).toBe(200);
    for (const peer of [busy, idle]) await peer.close();
  });

  it('stateless 2025-era requests leave no server instance or connection behind', async () => {
    const server = await start();
    const before = (tasks as McpTasks).connectionCount;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    };
    for (let i = 0; i < 100; i++) {
      for (const body of [
        { jsonrpc: '2.0', id: i, method: 'tasks/get', params: { taskId: crypto.randomUUID() } },
        { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'big', arguments: { size: 10 } } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ]) {
        const response = await fetch(server.url, { method: 'POST', headers, body: JSON.stringify(body) });
        expect(response.status).toBeLessThan(300);
        await response.arrayBuffer();
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((tasks as McpTasks).connectionCount).toBe(before);
  });

  /** POSTs a flood (50 MB of progress over 2 s or more) in the peer's session; reads its first event, then nothing for 3 s. */
  function floodWithoutReading(server: HttpServerHandle, peer: HttpPeer) {
    return new Promise<{ cut: boolean; received: string }>((resolve, reject) => {
      let cut = false;
      const request = httpRequest(
        server.url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': peer.sessionId as string,
            'mcp-protocol-version': '2025-11-25',
          },
        },
        (response) => {
          // The kernel's socket buffers fill, then the server's pending output grows.
          let body = '';
          let paused = false;
          response.on('aborted', () => (cut = true));
          response.on('error', () => (cut = true));
          response.on('data', (chunk: Buffer) => {
            body += chunk.toString();
            if (paused || !/^id: /m.test(body)) return;
            paused = true;
            response.pause();
          });
          response.on('close', () => resolve({ cut, received: body }));
          // Reading again later drains what the kernel holds and shows how the server ended the stream.
          setTimeout(() => response.resume(), 3000);
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify(FLOOD));
    });
  }

  const FLOOD = {
    jsonrpc: '2.0',
    id: 'flood-1',
    method: 'tools/call',
    params: { name: 'flood', arguments: { count: 200, size: 256 * 1024 }, _meta: { progressToken: 'p' } },
  };

  /** Reads until the answer to `id` (the flood's unless told); returns its text and how many bytes came (kept cheap). */
  async function readUntilAnswer(response: Response, id = 'flood-1'): Promise<{ answer: string; bytes: number }> {
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let tail = '';
    let bytes = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      tail = (tail + decoder.decode(value, { stream: true })).slice(-1024);
      if (tail.includes(`"id":"${id}"`)) break;
    }
    await reader.cancel();
    return { answer: tail, bytes };
  }

  it('slow readers: a client that stops reading is cut off after slowReaderMs; its answer resumes with Last-Event-ID', async () => {
    // Long enough that the resuming reader, reading all the while, is never taken for a stalled one on a busy machine.
    const server = await start({ slowReaderMs: 3000 });
    const peer = await session();
    const { cut, received } = await floodWithoutReading(server, peer);
    expect(cut).toBe(true);
    expect(received).not.toContain('"id":"flood-1"');
    // The session is fine, and its event store (capped) still has the answer for a resume.
    expect(await pingStatus(peer)).toBe(200);
    const resumed = await fetch(server.url, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': peer.sessionId as string,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': /^id: (.+)$/m.exec(received)?.[1] as string,
      },
      signal: AbortSignal.timeout(10_000),
    });
    expect(resumed.status).toBe(200);
    expect((await readUntilAnswer(resumed)).answer).toContain('flooded');
    await peer.close();
  });

  it('slow readers: output pending beyond maxPendingBytes is cut at once, while a client that reads gets it all', async () => {
    const server = await start({ maxPendingBytes: 16 * MB, slowReaderMs: 60_000 });
    const peer = await session();
    const started = Date.now();
    const { cut, received } = await floodWithoutReading(server, peer);
    expect(cut).toBe(true);
    expect(received).not.toContain('"id":"flood-1"');
    // Cut on bytes, long before the stall timer (loose bound).
    expect(Date.now() - started).toBeLessThan(30_000);
    const reading = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': peer.sessionId as string,
        'mcp-protocol-version': '2025-11-25',
      },
      // Its own request id: the cut flood's tool may still be running, and its answer must not be taken for this one.
      body: JSON.stringify({ ...FLOOD, id: 'flood-2' }),
      signal: AbortSignal.timeout(30_000),
    });
    const { answer, bytes } = await readUntilAnswer(reading, 'flood-2');
    expect(answer).toContain('flooded');
    expect(bytes).toBeGreaterThan(50 * MB);
    await peer.close();
  });
});
